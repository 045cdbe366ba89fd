package warehouse

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/configtest"
)

// TestValidateNamesTheKey: the defaults are valid, and each value that
// makes no sense is refused naming its key.
func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	configtest.Check(t, DefaultConfig, Config.Validate,
		configtest.Bad("no unit", func(c *Config) { c.MemoryLimit = "512" }, `memoryLimit: "512" is not a size such as 512MiB or 2GB`),
		configtest.Bad("empty size", func(c *Config) { c.MemoryLimit = "" }, `memoryLimit: "" is not a size such as 512MiB or 2GB`),
		configtest.Bad("a statement", func(c *Config) { c.MemoryLimit = "1GB'; DROP" }, `memoryLimit: "1GB'; DROP" is not a size such as 512MiB or 2GB`),
		configtest.Bad("negative threads", func(c *Config) { c.Threads = -1 }, "threads: must not be negative, got -1"),
	)
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
