package export

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/analytics/render"
)

// Config is the export section of the configuration.
type Config struct {
	// Workers is how many exports render at once. Default 2.
	Workers int `yaml:"workers"`
	// Retention is how long an exported file can be downloaded. Default 24h.
	Retention time.Duration `yaml:"retention"`
	// HTMLRows is how many rows of a report an HTML export, and so the report
	// shown in the body of a mail, holds; the attachment has them all.
	// Default render.DefaultHTMLRows (50).
	HTMLRows int `yaml:"htmlRows"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Workers: 2, Retention: 24 * time.Hour, HTMLRows: render.DefaultHTMLRows}
}

// Validate checks the section, naming the key within it.
func (c Config) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, errors.New("workers: must be at least 1"))
	}
	if c.HTMLRows < 1 || c.HTMLRows > 10_000 {
		errs = append(errs, fmt.Errorf("htmlRows: must be from 1 to 10000, got %d", c.HTMLRows))
	}
	if c.Retention < time.Second {
		errs = append(errs, fmt.Errorf("retention: must be at least 1s, got %s", c.Retention))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field set to DefaultConfig's.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.Workers = cmp.Or(c.Workers, d.Workers)
	c.Retention = cmp.Or(c.Retention, d.Retention)
	c.HTMLRows = cmp.Or(c.HTMLRows, d.HTMLRows)
	return c
}
