package warehouse

import (
	"errors"
	"fmt"
	"regexp"
)

// Config is the warehouse section of the configuration: the bounds of DuckDB,
// which loads the data and computes every report.
type Config struct {
	// MemoryLimit caps DuckDB's memory; past it, DuckDB spills to <dir>/tmp or
	// fails the query. Default 1GiB.
	MemoryLimit string `yaml:"memoryLimit"`
	// Threads is how many threads one query may use; 0 means one per CPU. Default 0.
	Threads int `yaml:"threads"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{MemoryLimit: "1GiB"}
}

// memorySize is a size DuckDB's memory_limit takes.
var memorySize = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$`)

// Validate checks the section, naming the key within it.
func (c Config) Validate() error {
	var errs []error
	if !memorySize.MatchString(c.MemoryLimit) {
		errs = append(errs, fmt.Errorf("memoryLimit: %q is not a size such as 512MiB or 2GB", c.MemoryLimit))
	}
	if c.Threads < 0 {
		errs = append(errs, fmt.Errorf("threads: must not be negative, got %d", c.Threads))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field set to DefaultConfig's.
func (c Config) withDefaults() Config {
	if c.MemoryLimit == "" {
		c.MemoryLimit = DefaultConfig().MemoryLimit
	}
	return c
}
