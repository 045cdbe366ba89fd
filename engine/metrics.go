package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the engine's Prometheus series. Built over a nil registerer they count
// but are exported nowhere, so an engine in a test needs none.
type metrics struct {
	lateness   prometheus.Histogram
	behind     prometheus.Gauge
	runs       *prometheus.CounterVec
	refused    *prometheus.CounterVec
	executions prometheus.Counter
	cacheHits  prometheus.Counter
	// Attached reports: executions, files rendered by format, and results one run took from another.
	reportExecutions prometheus.Counter
	reportFiles      *prometheus.CounterVec
	reportHits       prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		lateness: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "herald_scheduler_lateness_seconds",
			Help:    "How long after its instant the scheduler handed a fire to the engine.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}),
		behind: f.NewGauge(prometheus.GaugeOpts{
			Name: "herald_scheduler_behind_seconds",
			Help: "How far behind its instant the last run the engine started was: fires wait for a free engine worker.",
		}),
		runs: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_engine_runs_total",
			Help: "Runs finished, by final state (not_triggered, delivered, failed, skipped, ...).",
		}, []string{"state"}),
		refused: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_engine_refused_runs_total",
			Help: "Fires the access decision refused, by why: notMember, mayNotExecute, mayNotExport, unreadable.",
		}, []string{"reason"}),
		executions: f.NewCounter(prometheus.CounterOpts{
			Name: "herald_engine_metric_executions_total",
			Help: "Metric executions the engine made, as the subscriptions' owners.",
		}),
		cacheHits: f.NewCounter(prometheus.CounterOpts{
			Name: "herald_engine_metric_cache_hits_total",
			Help: "Metric values a run took from another run of the same instant instead of executing.",
		}),
		reportExecutions: f.NewCounter(prometheus.CounterOpts{
			Name: "herald_engine_report_executions_total",
			Help: "Executions of attached reports: one per report and instant, however many runs attach it.",
		}),
		reportFiles: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_engine_report_files_total",
			Help: "Files of attached reports rendered, by format: one per report, format and instant.",
		}, []string{"format"}),
		reportHits: f.NewCounter(prometheus.CounterOpts{
			Name: "herald_engine_report_cache_hits_total",
			Help: "Report results and files a run took from another run of the same instant instead of making them.",
		}),
	}
}

func (m *metrics) fired(at, now time.Time) { m.lateness.Observe(max(now.Sub(at), 0).Seconds()) }
