package main

import (
	"slices"
	"testing"

	"github.com/heraldhq/herald/app"
)

func TestFlagsOverrideTheirKeys(t *testing.T) {
	t.Parallel()
	cfg := app.DefaultConfig()
	overrides{data: "d", listen: "127.0.0.1:8081", roles: "api,engine", metrics: "127.0.0.1:9181"}.apply(&cfg)
	if cfg.Data != "d" || cfg.Listen != "127.0.0.1:8081" || !slices.Equal(cfg.Roles, []string{"api", "engine"}) || cfg.Metrics.Listen != "127.0.0.1:9181" {
		t.Errorf("data %q, listen %q, roles %q, metrics %q", cfg.Data, cfg.Listen, cfg.Roles, cfg.Metrics.Listen)
	}
	overrides{metrics: "off"}.apply(&cfg)
	if cfg.Metrics.Listen != "" {
		t.Errorf(`--metrics off leaves metrics.listen %q`, cfg.Metrics.Listen)
	}
	def := app.DefaultConfig()
	overrides{}.apply(&def)
	if def.Metrics.Listen != app.DefaultConfig().Metrics.Listen || def.Listen != app.DefaultConfig().Listen {
		t.Errorf("no flags changed the defaults: %+v", def.Metrics)
	}
}
