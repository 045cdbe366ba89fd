package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/configtest"
)

// TestValidateNamesTheKey: the defaults are valid, and each value that
// makes no sense is refused naming its key.
func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	configtest.Check(t, DefaultConfig, Config.Validate,
		configtest.Bad("level", func(c *Config) { c.Level = "loud" }, `level: "loud" is not one of debug, info, warn, error`),
		configtest.Bad("level off", func(c *Config) { c.Level = "off" }, `level: "off" is not one of debug, info, warn, error`),
		configtest.Bad("format", func(c *Config) { c.Format = "xml" }, `format: "xml" is not one of text, json`),
		configtest.Bad("access", func(c *Config) { c.Access = "trace" }, `access: "trace" is not one of debug, info, warn, error, off`),
		configtest.Bad("sample below", func(c *Config) { c.AccessSample = -0.1 }, "accessSample: must be between 0 and 1, got -0.1"),
		configtest.Bad("sample above", func(c *Config) { c.AccessSample = 1.5 }, "accessSample: must be between 0 and 1, got 1.5"),
	)
}

// TestNewLogsAtTheLevelInTheFormat: the logger drops what is below the
// section's level and writes lines of its format.
func TestNewLogsAtTheLevelInTheFormat(t *testing.T) {
	t.Parallel()
	var text, js bytes.Buffer
	New(Config{Level: "warn", Format: "text"}, &text).Info("dropped")
	New(Config{Level: "warn", Format: "text"}, &text).Warn("kept", "k", "v")
	if got := text.String(); strings.Contains(got, "dropped") || !strings.Contains(got, "level=WARN msg=kept k=v") {
		t.Errorf("text log = %q", got)
	}
	New(Config{Level: "debug", Format: "json"}, &js).Debug("line", "k", "v")
	var rec map[string]any
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil || rec["msg"] != "line" || rec["level"] != "DEBUG" || rec["k"] != "v" {
		t.Errorf("json log = %q (%v)", js.String(), err)
	}
}

func TestAccessLogOfTheSection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		access string
		sample float64
		want   AccessLog
	}{
		{"info", 1, AccessLog{Level: slog.LevelInfo, Sample: 1}},
		{"debug", 0.25, AccessLog{Level: slog.LevelDebug, Sample: 0.25}},
		{"error", 1, AccessLog{Level: slog.LevelError, Sample: 1}},
		{"off", 1, AccessLog{Level: slog.LevelInfo, Off: true, Sample: 1}},
	} {
		c := DefaultConfig()
		c.Access, c.AccessSample = tc.access, tc.sample
		if got := c.AccessLog(); got != tc.want {
			t.Errorf("access %q: %+v, want %+v", tc.access, got, tc.want)
		}
	}
}
