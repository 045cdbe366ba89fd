package worker

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the worker's Prometheus series. Built over a nil registerer they count but
// are exported nowhere.
type metrics struct {
	handled     *prometheus.CounterVec
	attempts    *prometheus.CounterVec
	sendTime    *prometheus.HistogramVec
	redelivered *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		handled: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_worker_deliveries_total",
			Help: "Delivery messages handled, by channel kind and result: sent, failed (for good), retry " +
				"(a failed attempt that will be retried), skipped (settled before), dropped (its run was deleted or called off), " +
				"returned (handed back unsent), busy (a copy was being handled) and held (its destination took nothing; " +
				"it waits again, charged nothing).",
		}, []string{"kind", "result"}),
		attempts: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_worker_send_attempts_total",
			Help: "Sends tried, by channel kind and result (ok, error).",
		}, []string{"kind", "result"}),
		redelivered: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_worker_redelivered_total",
			Help: "Delivery messages JetStream handed out more often than they were tried and handed back: " +
				"after a sender stopped or died, or when its word that it held them was lost.",
		}, []string{"kind"}),
		sendTime: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_worker_send_duration_seconds",
			Help:    "Time one send took at the provider (SMTP relay, SMS gateway, ...), by channel kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"kind"}),
	}
}

// startAtZero exports each kind's deliveries by result, send attempts by
// result and redeliveries at 0 before their first count, so that a rate over
// them starts with the worker.
func (m *metrics) startAtZero(kinds []*kind) {
	for _, k := range kinds {
		name := string(k.kind)
		for o := outcomeSent; o <= outcomeHeld; o++ {
			m.handled.WithLabelValues(name, o.String())
		}
		for _, result := range []string{"ok", "error"} {
			m.attempts.WithLabelValues(name, result)
		}
		m.redelivered.WithLabelValues(name)
	}
}

func (m *metrics) sent(kind string, took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.attempts.WithLabelValues(kind, result).Inc()
	m.sendTime.WithLabelValues(kind).Observe(took.Seconds())
}

// collector reads, at each scrape, each kind's consumer state.
type collector struct {
	w           *Worker
	pending     *prometheus.Desc
	ackPending  *prometheus.Desc
	redelivered *prometheus.Desc
	down        *prometheus.Desc
	heldDests   *prometheus.Desc
}

// scrapeTimeout bounds the store and JetStream reads of one scrape.
const scrapeTimeout = 2 * time.Second

func newCollector(w *Worker) *collector {
	kind := []string{"kind"}
	return &collector{
		w: w,
		pending: prometheus.NewDesc("herald_worker_consumer_pending_messages",
			"Messages in the stream not yet handed to the kind's consumer.", kind, nil),
		ackPending: prometheus.NewDesc("herald_worker_consumer_ack_pending_messages",
			"Messages handed to the kind's consumer and not yet acknowledged.", kind, nil),
		redelivered: prometheus.NewDesc("herald_worker_consumer_redelivered_messages",
			"Messages handed to the kind's consumer more than once and not yet acknowledged.", kind, nil),
		down: prometheus.NewDesc("herald_worker_provider_unreachable",
			"1 while a destination of the kind (its SMTP relay, a webhook's receiver) is held as unavailable "+
				"and its sends wait for a probe to get through.", kind, nil),
		heldDests: prometheus.NewDesc("herald_worker_destinations_held",
			"Destinations of the kind held as unavailable, whose deliveries wait for a probe to get through.", kind, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.ackPending
	ch <- c.redelivered
	ch <- c.down
	ch <- c.heldDests
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	// A series that cannot be read is left out of the scrape rather than failing it:
	// /readyz tells what is down.
	for _, k := range c.w.kinds {
		_, _, held := k.pool.state()
		down := 0.0
		if held > 0 {
			down = 1
		}
		ch <- prometheus.MustNewConstMetric(c.down, prometheus.GaugeValue, down, string(k.kind))
		ch <- prometheus.MustNewConstMetric(c.heldDests, prometheus.GaugeValue, float64(held), string(k.kind))
		cons, err := c.w.js.Consumer(ctx, c.w.cfg.Stream, durable(k.kind))
		if err != nil {
			continue
		}
		info := cons.CachedInfo()
		name := string(k.kind)
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(info.NumPending), name)
		ch <- prometheus.MustNewConstMetric(c.ackPending, prometheus.GaugeValue, float64(info.NumAckPending), name)
		ch <- prometheus.MustNewConstMetric(c.redelivered, prometheus.GaugeValue, float64(info.NumRedelivered), name)
	}
}
