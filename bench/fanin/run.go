package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/bench/internal/mailcheck"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/store"
)

// The series that count the burst's metric executions and the requests the
// API answered meanwhile.
const (
	executionsMetric = "herald_engine_metric_executions_total"
	requestsMetric   = "herald_http_requests_total"
)

// instant is when the subscriptions fire: hourly at minute 0.
var instant = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// result is what one run measured.
type result struct {
	executions       int           // metric executions the engine made
	apiRequests      int           // requests the API answered during the burst
	handed, lastMail time.Duration // from the instant
	peakRSS          float64       // MiB, during the burst
	cpu              time.Duration // the process's, from a second before the instant to the last mail
	burst            histogram     // the scheduler's lateness over the fires of the instant's second
	later            histogram     // and over the fires after it, until the last mail
	checksum         uint64        // of every subscription's value, each checked (mailcheck.Values.Check)
}

// run sets up a fresh Herald, fires the burst and measures it.
func run(ctx context.Context, o options) result {
	dir, err := os.MkdirTemp("", "herald-fanin")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	vals := mailcheck.NewValues(o.subs)
	sink, err := benchapp.NewSink(o.subs, benchapp.WithBody(vals.See))
	if err != nil {
		log.Fatal(err)
	}
	defer sink.Close()
	clock := &benchapp.ShiftedClock{}
	clock.Set(instant.Add(-time.Hour))
	configure := func(c *app.Config) {
		c.Log.Level, c.Engine.Workers = "error", o.workers
		sec := c.Channels["smtp"].(*email.Settings)
		sec.Host, sec.Port, sec.TLSPolicy = "127.0.0.1", sink.Port(), "none"
	}

	// First start: the demo project, the metrics and the subscriptions,
	// without the demo's own subscription, which would mail at the instant too.
	h, stop, err := benchapp.Start(ctx, dir, configure, app.Options{Clock: clock, Demo: true})
	if err != nil {
		log.Fatal(err)
	}
	metrics := makeMetrics(ctx, h, o.metrics)
	admin := strings.TrimPrefix(h.Profile, "/svc/account/profile/")
	subscribe(ctx, h.App.Store(), metrics, o, admin, clock.Now())
	stop()

	// Second start, a little before the instant, with /metrics served;
	// warnings and errors are printed.
	clock.Set(instant.Add(-o.lead))
	h, stop, err = benchapp.Start(ctx, dir, func(c *app.Config) {
		configure(c)
		c.Metrics.Listen = "127.0.0.1:0"
	}, app.Options{Clock: clock, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "herald.db")+"?_query_only=1&_busy_timeout=5000")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if lead := time.Until(clock.Real(instant)); lead < time.Second {
		log.Fatalf("Herald started %s before the instant; give it more -lead", lead)
	}
	time.Sleep(time.Until(clock.Real(instant.Add(-time.Second))))
	before := scrapeLateness(h.App.OpsURL())
	// Half a second after the instant, its fires are handed over and the next
	// second's are not due yet.
	atBurst := make(chan histogram, 1)
	time.AfterFunc(time.Until(clock.Real(instant.Add(time.Second/2))), func() { atBurst <- scrapeLateness(h.App.OpsURL()) })
	counted := scrape(h.App.OpsURL())
	benchapp.ResetPeakRSS()
	cpu := benchapp.CPUTime()
	stopProfiles := startProfiles(o)
	defer stopProfiles()
	begin := clock.Real(instant)
	r := result{handed: waitHanded(db, o, begin, sink)}
	if o.profileHandover {
		stopProfiles()
	}
	r.lastMail = waitMails(db, o, sink, begin)
	subOf, err := subscriptions(db)
	if err != nil {
		log.Fatal(err)
	}
	if r.checksum, err = vals.Check(o.subs, o.metrics, subOf); err != nil {
		log.Fatal(err)
	}
	r.cpu = benchapp.CPUTime() - cpu
	r.peakRSS = benchapp.PeakRSS()
	now := scrape(h.App.OpsURL())
	r.executions = int(benchapp.Sum(now, executionsMetric) - benchapp.Sum(counted, executionsMetric))
	// The scrape itself is not a request to the API: /metrics is the operator's listener.
	r.apiRequests = int(benchapp.Sum(now, requestsMetric) - benchapp.Sum(counted, requestsMetric))
	burst := <-atBurst
	r.burst, r.later = burst.minus(before), scrapeLateness(h.App.OpsURL()).minus(burst)
	return r
}

// startProfiles starts the CPU and block profiles o asks for and returns the
// function that stops them, which does so once however often it is called.
func startProfiles(o options) (stop func()) {
	var stops []func()
	if o.profile != "" {
		stops = append(stops, startProfile(o.profile))
	}
	if o.blockProfile != "" {
		stops = append(stops, startBlockProfile(o.blockProfile))
	}
	if o.trace != "" {
		stops = append(stops, startTrace(o.trace))
	}
	return sync.OnceFunc(func() {
		for _, stop := range stops {
			stop()
		}
	})
}

// The hand-over's polls: the highest delivery rowid, and the burst's
// deliveries counted.
const (
	lastDelivery = `SELECT COALESCE(MAX(rowid), 0) FROM deliveries`
	countHanded  = `SELECT COUNT(*) FROM deliveries WHERE subscription_id LIKE 'bench%'`
)

// waitHanded returns, counted from begin, when every subscription of the
// burst has its delivery row: each run's outcome and its deliveries are
// written in one transaction, so the last row marks the last run evaluated
// and handed over.
//
// The poll must not load the process it measures: a COUNT over the
// deliveries every 5 ms took 0.2 to 0.35 s of CPU during the hand-over. It
// reads the highest rowid instead (rows are only added during the burst,
// each with the next rowid), one step down an index, and confirms with the
// full count once that reaches the burst's size.
func waitHanded(db *sql.DB, o options, begin time.Time, sink *benchapp.Sink) time.Duration {
	var base int
	if err := db.QueryRow(lastDelivery).Scan(&base); err != nil {
		log.Fatal(err)
	}
	for tick := time.NewTicker(5 * time.Millisecond); ; <-tick.C {
		var last int
		if err := db.QueryRow(lastDelivery).Scan(&last); err != nil {
			log.Fatal(err)
		}
		if o.verbose {
			var claimed, deliveries int
			_ = db.QueryRow(`SELECT COUNT(*) FROM runs WHERE subscription_id LIKE 'bench%'`).Scan(&claimed)
			_ = db.QueryRow(countHanded).Scan(&deliveries)
			fmt.Printf("%6s claimed %5d handed over %5d %s\n", time.Since(begin).Round(time.Millisecond),
				claimed, deliveries, mailProgress(db, sink))
		}
		if last-base >= o.subs {
			var deliveries int
			if err := db.QueryRow(countHanded).Scan(&deliveries); err != nil {
				log.Fatal(err)
			}
			if deliveries >= o.subs {
				return time.Since(begin)
			}
		}
		if time.Since(begin) > 5*time.Minute {
			log.Fatalf("timed out: %d deliveries", last-base)
		}
	}
}

// mailProgress says how far the burst's mails are: waiting in the outbox,
// accepted by the server, recorded sent.
func mailProgress(db *sql.DB, sink *benchapp.Sink) string {
	var outbox, sent int
	_ = db.QueryRow(`SELECT COUNT(*) FROM outbox`).Scan(&outbox)
	_ = db.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE subscription_id LIKE 'bench%' AND state = 'sent'`).Scan(&sent)
	accepted, _ := sink.Counts()
	return fmt.Sprintf("in the outbox %5d accepted %5d recorded sent %5d", outbox, accepted, sent)
}

// waitMails returns, counted from begin, when the sink has accepted every
// mail of the burst, and fails on a Message-ID that arrived twice. With -v it
// goes on printing progress, every 50 ms, until then.
func waitMails(db *sql.DB, o options, sink *benchapp.Sink, begin time.Time) time.Duration {
	var tick <-chan time.Time
	if o.verbose {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	timeout := time.After(5 * time.Minute)
wait:
	for {
		select {
		case <-sink.Done():
			break wait
		case <-tick:
			fmt.Printf("%6s %s\n", time.Since(begin).Round(time.Millisecond), mailProgress(db, sink))
		case <-timeout:
			total, _ := sink.Counts()
			log.Fatalf("timed out: %d of %d mails", total, o.subs)
		}
	}
	last := time.Since(begin)
	if total, distinct := sink.Counts(); total != distinct {
		log.Fatalf("%d mails, %d distinct Message-IDs", total, distinct)
	}
	return last
}

// makeMetrics creates n distinct metrics over the demo's sales amount.
func makeMetrics(ctx context.Context, h *benchapp.Herald, n int) []string {
	md, err := h.Metadata(ctx)
	if err != nil {
		log.Fatalf("demo project: %v", err)
	}
	uris := make([]string, n)
	for i := range uris {
		body := map[string]any{"metric": map[string]any{
			"meta":    map[string]any{"title": fmt.Sprintf("Revenue plus %d", i), "identifier": fmt.Sprintf("metric.bench.%d", i)},
			"content": map[string]any{"expression": fmt.Sprintf("SELECT SUM({fact.sales.amount}) + %d", i), "format": "#,##0.00"},
		}}
		var out struct {
			URI string `json:"uri"`
		}
		if err := h.Client.Do(ctx, "POST", md+"/obj", body, &out); err != nil {
			log.Fatalf("create metric: %v", err)
		}
		uris[i] = out.URI
	}
	return uris
}

// subscribe stores the burst's subscriptions of the admin, hourly at minute
// 0, spread over the metrics, each mailing the admin's demo channel; and the
// unrelated ones, every second with a condition that is never met. It deletes
// the demo's own subscriptions.
func subscribe(ctx context.Context, st *store.Store, metrics []string, o options, admin string, now time.Time) {
	demo, err := st.EnabledSubscriptions(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range demo {
		if err := st.DeleteSubscription(ctx, s.ID); err != nil {
			log.Fatal(err)
		}
	}
	chans, err := st.Channels(ctx, admin)
	if err != nil || len(chans) == 0 {
		log.Fatalf("admin channel: %v", err)
	}
	pid := strings.Split(metrics[0], "/")[3]
	add := func(id, cron, condition, message string) {
		sub := store.Subscription{ID: id, ProjectID: pid, Owner: admin, Title: "fan-in",
			Enabled: true, Channels: []string{chans[0].ID}, Created: now, Updated: now,
			Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: cron, Timezone: "UTC"}},
				Condition: condition, Message: message, FireMode: store.FireAlways}}
		if err := st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
			log.Fatal(err)
		}
	}
	for i := range o.subs {
		m := metrics[i%len(metrics)]
		add(fmt.Sprintf("bench%06d", i), "0 0 * * * *", "f:executeMetric('"+m+"') > 0", "Revenue ${f:executeMetric('"+m+"')}")
	}
	for i := range o.unrelated {
		add(fmt.Sprintf("tick%06d", i), "* * * * * *", "false", "never sent")
	}
}

// scrape reads Herald's /metrics.
func scrape(opsURL string) map[string]float64 {
	m, err := apptest.Metrics(opsURL)
	if err != nil {
		log.Fatal(err)
	}
	return m
}
