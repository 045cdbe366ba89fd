package app_test

import (
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// TestCountersStartAtZero: a fresh service exports its counters of fixed
// label sets at 0 before anything was counted, so that rate() and alerts see
// the first increase.
func TestCountersStartAtZero(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	m, err := apptest.Metrics(b.App.OpsURL())
	if err != nil {
		t.Fatal(err)
	}
	for _, series := range []string{
		`herald_task_tasks_total{state="OK",type="validate"}`,
		`herald_task_tasks_total{state="ERROR",type="project.import"}`,
		`herald_engine_runs_total{state="failed"}`,
		`herald_engine_runs_total{state="queued"}`,
		`herald_engine_report_files_total{format="PDF"}`,
		`herald_export_exports_total{format="CSV",state="done"}`,
		`herald_export_exports_total{format="XLS",state="failed"}`,
		`herald_worker_deliveries_total{kind="email",result="sent"}`,
		`herald_worker_deliveries_total{kind="webhook",result="failed"}`,
		`herald_worker_send_attempts_total{kind="sms",result="error"}`,
	} {
		v, ok := m[series]
		if !ok || v != 0 {
			t.Errorf("%s: %v (present %v), want 0", series, v, ok)
		}
	}
}
