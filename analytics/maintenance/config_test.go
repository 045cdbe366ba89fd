package maintenance

import (
	"testing"
	"time"
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
		{"no workers", func(c *Config) { c.Workers = 0 }, "workers: maintenance.workers and maintenance.queue must be at least 1"},
		{"no queue", func(c *Config) { c.Queue = 0 }, "workers: maintenance.workers and maintenance.queue must be at least 1"},
		{"short retention", func(c *Config) { c.ArchiveRetention = 59 * time.Second }, "archiveRetention: must be at least 1m, got 59s"},
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
}

// TestZeroValuesTakeTheDefaults: a Service built with an empty Config runs
// with DefaultConfig's values, not with others of its own.
func TestZeroValuesTakeTheDefaults(t *testing.T) {
	t.Parallel()
	if got, want := (Config{}).withDefaults(), DefaultConfig(); got != want {
		t.Errorf("withDefaults = %+v, want %+v", got, want)
	}
	set := Config{Workers: 5, Queue: 3, ArchiveRetention: time.Hour}
	if got := set.withDefaults(); got != set {
		t.Errorf("withDefaults changed set values: %+v, want %+v", got, set)
	}
}
