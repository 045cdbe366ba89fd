package export

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
		configtest.Bad("no workers", func(c *Config) { c.Workers = 0 }, "workers: must be at least 1"),
		configtest.Bad("no html rows", func(c *Config) { c.HTMLRows = 0 }, "htmlRows: must be from 1 to 10000, got 0"),
		configtest.Bad("too many html rows", func(c *Config) { c.HTMLRows = 10_001 }, "htmlRows: must be from 1 to 10000, got 10001"),
		configtest.Bad("short retention", func(c *Config) { c.Retention = 999 * time.Millisecond }, "retention: must be at least 1s, got 999ms"),
	)
}

// TestZeroValuesTakeTheDefaults: a Service built with an empty Config runs
// with DefaultConfig's values, not with others of its own.
func TestZeroValuesTakeTheDefaults(t *testing.T) {
	t.Parallel()
	if got, want := (Config{}).withDefaults(), DefaultConfig(); got != want {
		t.Errorf("withDefaults = %+v, want %+v", got, want)
	}
	set := Config{Workers: 5, Retention: 3 * time.Second, HTMLRows: 7}
	if got := set.withDefaults(); got != set {
		t.Errorf("withDefaults changed set values: %+v, want %+v", got, set)
	}
}
