package export

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
		{"no workers", func(c *Config) { c.Workers = 0 }, "workers: must be at least 1"},
		{"no html rows", func(c *Config) { c.HTMLRows = 0 }, "htmlRows: must be from 1 to 10000, got 0"},
		{"too many html rows", func(c *Config) { c.HTMLRows = 10_001 }, "htmlRows: must be from 1 to 10000, got 10001"},
		{"short retention", func(c *Config) { c.Retention = 999 * time.Millisecond }, "retention: must be at least 1s, got 999ms"},
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
	set := Config{Workers: 5, Retention: 3 * time.Second, HTMLRows: 7}
	if got := set.withDefaults(); got != set {
		t.Errorf("withDefaults changed set values: %+v, want %+v", got, set)
	}
}
