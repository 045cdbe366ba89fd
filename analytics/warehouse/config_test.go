package warehouse

import (
	"context"
	"strings"
	"testing"
)

func TestDefaultConfigIsValid(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no unit", func(c *Config) { c.MemoryLimit = "512" }, `memoryLimit: "512" is not a size such as 512MiB or 2GB`},
		{"empty size", func(c *Config) { c.MemoryLimit = "" }, `memoryLimit: "" is not a size such as 512MiB or 2GB`},
		{"a statement", func(c *Config) { c.MemoryLimit = "1GB'; DROP" }, `memoryLimit: "1GB'; DROP" is not a size such as 512MiB or 2GB`},
		{"negative threads", func(c *Config) { c.Threads = -1 }, "threads: must not be negative, got -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			tc.change(&c)
			if err := c.Validate(); err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	for _, ok := range []string{"512MiB", "2GB", "1.5 GiB", "100B"} {
		if err := (Config{MemoryLimit: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestOpenTakesTheDefaultMemoryLimit: a warehouse opened without a memory
// limit runs under DefaultConfig's, not DuckDB's own (80% of the RAM).
func TestOpenTakesTheDefaultMemoryLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var limit string
	if err := w.db.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(limit, "1.0 GiB") && !strings.HasPrefix(limit, "1.0GiB") {
		t.Errorf("memory_limit = %q, want 1 GiB", limit)
	}
}
