// Command fanin measures alert fan-in: 10,000 subscriptions on 100 metrics
// of the demo project fire at one instant. It starts Herald in-process on a
// driven clock, moves the clock to the instant and times how long it takes
// until every run is evaluated and handed over (one delivery row each), and
// counts the metric executions the API served.
//
//	go run ./bench/fanin [-subs 10000] [-metrics 100]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/store"
)

// executor3 is the execute endpoint, whose 201 answers count executions.
const executor3 = "/svc/xtab2/executor3"

func main() {
	nsubs := flag.Int("subs", 10_000, "subscriptions")
	nmetrics := flag.Int("metrics", 100, "distinct metrics")
	workers := flag.Int("workers", 8, "engine workers")
	perProject := flag.Int("per-project", 0, "reports of one project computed at once (0: the default)")
	verbose := flag.Bool("v", false, "print progress while the burst runs")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the burst to this file")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "herald-fanin")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	clock := apptest.NewClock(time.Date(2026, 6, 1, 8, 59, 0, 0, time.UTC))
	configure := func(c *app.Config) {
		c.Log.Level, c.Engine.Workers = "error", *workers
		if *perProject > 0 {
			c.Execution.PerProject = *perProject
		}
	}

	// First start: the demo project, its metrics and the subscriptions.
	h, stop, err := benchapp.Start(ctx, dir, configure, app.Options{Clock: clock, Demo: true})
	if err != nil {
		log.Fatal(err)
	}
	metrics := makeMetrics(ctx, h, *nmetrics)
	subscribe(ctx, h.App.Store(), metrics, *nsubs, strings.TrimPrefix(h.Profile, "/svc/account/profile/"), clock.Now())
	stop()

	// Second start loads the subscriptions; the clock then moves to the
	// instant. Requests are logged at debug, where the counter sees them.
	requests := benchapp.NewRequests(executor3)
	_, stop, err = benchapp.Start(ctx, dir, func(c *app.Config) { configure(c); c.Log.Level = "debug" },
		app.Options{Clock: clock, Logger: slog.New(requests)})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "herald.db")+"?_query_only=1&_busy_timeout=5000")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	time.Sleep(time.Second) // let the engine load and arm its timer
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	begin := time.Now()
	clock.Advance(time.Minute)
	// A run's outcome and its deliveries are written in one transaction, so
	// the last delivery row marks the last run evaluated and handed over.
	var handed time.Duration
	for tick := time.NewTicker(5 * time.Millisecond); ; <-tick.C {
		var deliveries int
		if err := db.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE subscription_id LIKE 'bench%'`).Scan(&deliveries); err != nil {
			log.Fatal(err)
		}
		if *verbose {
			var claimed, sent int
			_ = db.QueryRow(`SELECT COUNT(*) FROM runs WHERE subscription_id LIKE 'bench%'`).Scan(&claimed)
			_ = db.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE subscription_id LIKE 'bench%' AND state = 'sent'`).Scan(&sent)
			fmt.Printf("%6s claimed %5d handed over %5d sent %5d executions %d\n", time.Since(begin).Round(time.Millisecond),
				claimed, deliveries, sent, requests.Count(executor3))
		}
		if deliveries >= *nsubs {
			handed = time.Since(begin)
			break
		}
		if time.Since(begin) > 5*time.Minute {
			log.Fatalf("timed out: %d deliveries", deliveries)
		}
	}
	fmt.Printf("%d subscriptions on %d metrics firing at one instant, %d engine workers\n", *nsubs, *nmetrics, *workers)
	fmt.Printf("metric executions served by the API: %d (the demo's own subscription adds its few)\n", requests.Count(executor3))
	fmt.Printf("every run evaluated and handed over (one delivery each) after: %s\n", handed.Round(time.Millisecond))
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

// subscribe stores n subscriptions of the admin, hourly at minute 0, spread
// over the metrics, each mailing the admin's demo channel.
func subscribe(ctx context.Context, st *store.Store, metrics []string, n int, admin string, now time.Time) {
	chans, err := st.Channels(ctx, admin)
	if err != nil || len(chans) == 0 {
		log.Fatalf("admin channel: %v", err)
	}
	pid := strings.Split(metrics[0], "/")[3]
	for i := range n {
		m := metrics[i%len(metrics)]
		sub := store.Subscription{ID: fmt.Sprintf("bench%06d", i), ProjectID: pid, Owner: admin, Title: "fan-in",
			Enabled: true, Channels: []string{chans[0].ID}, Created: now, Updated: now,
			Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: "0 0 * * * *", Timezone: "UTC"}},
				Condition: "f:executeMetric('" + m + "') > 0", Message: "Revenue ${f:executeMetric('" + m + "')}",
				FireMode: store.FireAlways}}
		if err := st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
			log.Fatal(err)
		}
	}
}
