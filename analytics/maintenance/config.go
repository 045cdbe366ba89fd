package maintenance

import (
	"errors"
	"fmt"
	"time"
)

// Config is the maintenance section of the configuration: the task pool that
// validations, exports and imports run on, and how long archives are kept.
type Config struct {
	// Workers is how many maintenance tasks (validations, exports, imports)
	// run at once: the size of the task pool the Service is given. Default 2.
	Workers int `yaml:"workers"`
	// Queue is how many tasks may wait for a worker; beyond it requests get 503. Default 64.
	Queue int `yaml:"queue"`
	// ArchiveRetention is how long an export's archive, and the token naming it, stays valid. Default 48h.
	ArchiveRetention time.Duration `yaml:"archiveRetention"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Workers: 2, Queue: 64, ArchiveRetention: 48 * time.Hour}
}

// Validate checks the section, naming the key within it.
func (c Config) Validate() error {
	var errs []error
	if c.Workers < 1 || c.Queue < 1 {
		errs = append(errs, errors.New("workers: maintenance.workers and maintenance.queue must be at least 1"))
	}
	if c.ArchiveRetention < time.Minute {
		errs = append(errs, fmt.Errorf("archiveRetention: must be at least 1m, got %s", c.ArchiveRetention))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every field below one set to DefaultConfig's.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.Queue <= 0 {
		c.Queue = d.Queue
	}
	if c.ArchiveRetention <= 0 {
		c.ArchiveRetention = d.ArchiveRetention
	}
	return c
}
