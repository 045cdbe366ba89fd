package app_test

import (
	"testing"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
)

// TestProcessGCTarget: `herald serve` runs its garbage collector at
// runtime.gcPercent, or at GOGC when that is set, as Go has it; /metrics shows
// which.
func TestProcessGCTarget(t *testing.T) {
	t.Parallel() // each case takes a slot of the gate
	cases := []struct {
		name string
		env  []string
		want float64
	}{
		{"default", nil, app.DefaultGCPercent},
		{"configured", []string{"HERALD_RUNTIME_GCPERCENT=150"}, 150},
		{"GOGC wins", []string{"HERALD_RUNTIME_GCPERCENT=150", "GOGC=50"}, 50},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gate.Parallel(t)
			p := apptest.StartProcess(t, t.TempDir(), tc.env...)
			if got, ok := scrape(t, p.OpsURL)["go_gc_gogc_percent"]; !ok || got != tc.want {
				t.Errorf("go_gc_gogc_percent = %v (exposed: %v), want %v", got, ok, tc.want)
			}
		})
	}
}
