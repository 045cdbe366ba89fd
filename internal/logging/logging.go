package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// Config is the log section of the configuration.
type Config struct {
	// Level is debug, info, warn or error. Default info.
	Level string `yaml:"level"`
	// Format is text or json. Default text.
	Format string `yaml:"format"`
	// Access is the level of the access-log line of a request that succeeded (debug, info,
	// warn, error), or off for none. Failed requests are logged at info (4xx) or warn (5xx)
	// unless it is off. Default info.
	Access string `yaml:"access"`
	// AccessSample is the share of successful requests that get a line, from 0 to 1. Default 1.
	AccessSample float64 `yaml:"accessSample"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Level: "info", Format: "text", Access: "info", AccessSample: 1}
}

// Validate checks the section, naming the key within it.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("level: %q is not one of debug, info, warn, error", c.Level)
	}
	if c.Format != "text" && c.Format != "json" {
		bad("format: %q is not one of text, json", c.Format)
	}
	switch c.Access {
	case "debug", "info", "warn", "error", "off":
	default:
		bad("access: %q is not one of debug, info, warn, error, off", c.Access)
	}
	if c.AccessSample < 0 || c.AccessSample > 1 {
		bad("accessSample: must be between 0 and 1, got %v", c.AccessSample)
	}
	return errors.Join(errs...)
}

// New returns the logger the section describes, writing to w. Of a section
// that Validate refuses, an unknown level is info and an unknown format text.
func New(c Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // checked by Validate; else info
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// AccessLog says which requests get a line in the log.
type AccessLog struct {
	// Level of the line of a request that succeeded (status below 400); failed ones are
	// logged at Warn (5xx) or Info (4xx) whatever it is. Default Info.
	Level slog.Level
	// Off logs no request at all.
	Off bool
	// Sample is the share of successful requests logged, from 0 to 1. Default 1.
	Sample float64
}

// AccessLog returns the access-log policy of the section.
func (c Config) AccessLog() AccessLog {
	al := AccessLog{Off: c.Access == "off", Sample: c.AccessSample}
	_ = al.Level.UnmarshalText([]byte(c.Access)) // checked by Validate; "off" leaves Info
	return al
}
