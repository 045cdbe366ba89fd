package maintenance

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/configtest"
)

// TestValidateNamesTheKey: the defaults are valid, and each value that
// makes no sense is refused naming its key.
func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	configtest.Check(t, DefaultConfig, Config.Validate,
		configtest.Bad("no workers", func(c *Config) { c.Workers = 0 }, "workers: maintenance.workers and maintenance.queue must be at least 1"),
		configtest.Bad("no queue", func(c *Config) { c.Queue = 0 }, "workers: maintenance.workers and maintenance.queue must be at least 1"),
		configtest.Bad("short retention", func(c *Config) { c.ArchiveRetention = 59 * time.Second }, "archiveRetention: must be at least 1m, got 59s"),
	)
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
