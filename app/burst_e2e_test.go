package app_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// sum adds up every series of metric in m.
func sum(m map[string]float64, metric string) float64 {
	var n float64
	for series, v := range m {
		if series == metric || strings.HasPrefix(series, metric+"{") {
			n += v
		}
	}
	return n
}

// TestReportBurstMakesNoRequest: 1,000 subscriptions attach one report and
// fire at one instant; the engine executes and renders it in process, as
// each owner, and no request reaches the API while they run: the access log
// has no line and herald_http_requests_total does not move, while every
// mail goes out with its PDF, rendered once.
func TestReportBurstMakesNoRequest(t *testing.T) {
	gate.Parallel(t)
	if testing.Short() {
		t.Skip("a burst of 1,000 mails")
	}
	const n = 1000
	w := newNotifyWorld(t)
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.metricURI + "') gt 0"}}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"PDF"}}}
	})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if r := w.jane.do("POST", w.subsBase, body); r.status != 201 {
				errs <- fmt.Errorf("create: %d %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	scrape := func() map[string]float64 {
		m, err := apptest.Metrics(w.b.App.OpsURL())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before, logged := scrape(), len(w.b.Log.String())
	w.b.Clock.Advance(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mails, err := w.smtp.Await(ctx, n)
	if err != nil {
		t.Fatalf("%d of %d mails: %v", len(w.smtp.Messages()), n, err)
	}
	after := scrape()

	if got := sum(after, "herald_http_requests_total") - sum(before, "herald_http_requests_total"); got != 0 {
		t.Errorf("herald_http_requests_total grew by %g during the burst, want 0", got)
	}
	if lines := strings.Count(w.b.Log.String()[logged:], "msg=request "); lines != 0 {
		t.Errorf("the access log has %d lines from the burst, want none:\n%s", lines, w.b.Log.String()[logged:])
	}
	for metric, want := range map[string]float64{"herald_engine_report_executions_total": 1,
		`herald_engine_report_files_total{format="PDF"}`: 1, "herald_engine_metric_executions_total": 1} {
		if got := sum(after, metric) - sum(before, metric); got != want {
			t.Errorf("%s grew by %g, want %g", metric, got, want)
		}
	}
	for _, m := range mails {
		if len(m.Attachments) != 1 || m.Attachments[0].Inline || !strings.HasSuffix(m.Attachments[0].Name, ".pdf") ||
			!strings.HasPrefix(string(m.Attachments[0].Data), "%PDF-") {
			t.Fatalf("a mail of the burst: %q with %d attachments", m.Subject, len(m.Attachments))
		}
	}
}
