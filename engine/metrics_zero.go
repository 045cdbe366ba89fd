package engine

import (
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// startAtZero exports the runs by final state, the refused fires by reason
// and the report files by format at 0 before their first count, so that a
// rate over them starts with the engine.
func (m *metrics) startAtZero() {
	for _, code := range []string{notify.NotMember, notify.MayNotExecute, notify.MayNotExport, notify.Unreadable} {
		m.refused.WithLabelValues(code)
	}
	for _, state := range []string{store.RunQueued, store.RunNotTriggered, store.RunSkipped, store.RunFailed} {
		m.runs.WithLabelValues(state)
	}
	for _, format := range []string{render.FormatCSV, render.FormatXLS, render.FormatPDF, render.FormatPNG, render.FormatHTML} {
		m.reportFiles.WithLabelValues(format)
	}
}
