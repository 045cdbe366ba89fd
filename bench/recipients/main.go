// Command recipients measures subscriptions that go to many people, each as
// themselves. By default, 10,000 members of a project, each with a user
// filter on one of 100 stores, get one subscription at one instant: its
// revenue and a report of their store's sales by month as PDF and XLS,
// mailed to an SMTP server on loopback. It counts the metric and report
// executions and the files rendered by format (one per slice is the aim),
// times the last mail accepted after the instant, and reads the process's
// peak resident memory during the burst. Beside it, right after, a bare
// go-mail loop sends as many mails of the same size, a file attached to
// each, at the e-mail kind's concurrency: the verdict on the last mail is
// its ratio to that loop's time.
//
// With -burst, a subscription bursts instead from a report of that many
// rows (managers' addresses, spread over -slices stores), each address
// getting its store's revenue and sales as CSV; it times the handover,
// from the instant until the run's deliveries are in the outbox, and with
// -mails the last mail too.
//
//	go run ./bench/recipients [-members 10000] [-slices 100]
//	go run ./bench/recipients -burst 100000 -slices 1000 [-mails]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/store"
)

// The series the benchmark reads from Herald's /metrics.
const (
	metricExecutions = "herald_engine_metric_executions_total"
	reportExecutions = "herald_engine_report_executions_total"
	filesRendered    = "herald_engine_report_files_total"
)

func main() {
	members := flag.Int("members", 10_000, "members the subscription goes to, each as themselves")
	burst := flag.Int("burst", 0, "burst from a report of this many rows instead of members")
	nslices := flag.Int("slices", 100, "distinct slices of the data (stores) the recipients fall into")
	mails := flag.Bool("mails", false, "with -burst, wait for every mail too")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the burst to this file")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "herald-recipients")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	benchapp.Header(os.Stdout, "recipients")
	recipients := *members
	if *burst > 0 {
		recipients = *burst
	}
	sink, err := benchapp.NewSink(recipients)
	if err != nil {
		log.Fatal(err)
	}
	defer sink.Close()
	clock := apptest.NewClock(time.Date(2026, 6, 1, 8, 59, 30, 0, time.UTC))
	configure := func(c *app.Config) {
		sec := c.Channels["smtp"].(*email.Settings)
		sec.Host, sec.Port, sec.TLSPolicy = "127.0.0.1", sink.Port(), "none"
		c.Metrics.Listen = "127.0.0.1:0"
	}
	h, stop, err := benchapp.Start(ctx, dir, configure, app.Options{Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	w := setUp(ctx, h, *nslices)
	var sub string
	if *burst > 0 {
		sub = w.burst(ctx, *burst)
	} else {
		sub = w.members(ctx, *members)
	}
	st := h.App.Store()
	before := scrape(h.App.OpsURL())
	benchapp.ResetPeakRSS()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	begin := time.Now()
	clock.Advance(30 * time.Second)
	handedOver, run := awaitHandover(ctx, st, sub, begin)
	var last time.Duration
	if *burst == 0 || *mails {
		select {
		case <-sink.Done():
			last = time.Since(begin)
		case <-time.After(10 * time.Minute):
			total, _ := sink.Counts()
			log.Fatalf("timed out: %d of %d mails", total, recipients)
		}
	}
	peak := benchapp.PeakRSS()
	after := scrape(h.App.OpsURL())
	d := runDetail(run)
	if *burst > 0 {
		fmt.Printf("a burst from a report of %d rows over %d stores at one instant\n", *burst, *nslices)
	} else {
		fmt.Printf("%d members over %d slices (stores), one subscription attaching a report as PDF and XLS at one instant\n",
			*members, *nslices)
	}
	fmt.Printf("run %s: %d deliveries, %d recipients in %d slices, %d skipped, %d rows read\n", run.State,
		count(ctx, st, run.ID), d.recipients, d.slices, d.skipped, d.rows)
	fmt.Printf("metric executions: %g; report executions: %g; files rendered: %s\n",
		benchapp.Sum(after, metricExecutions)-benchapp.Sum(before, metricExecutions),
		benchapp.Sum(after, reportExecutions)-benchapp.Sum(before, reportExecutions), rendered(before, after))
	fmt.Printf("handed over %s after the instant (the run's stages, ms: %v)\n", handedOver.Round(time.Millisecond), d.timings)
	if last > 0 {
		total, distinct := sink.Counts()
		fmt.Printf("the last of %d mails (%d distinct, %.0f KB a mail) accepted %s after the instant\n", total, distinct,
			float64(sink.Bytes())/float64(total)/1e3, last.Round(time.Millisecond))
	}
	fmt.Printf("peak RSS during the burst: %.0f MiB\n", peak)
	if *burst == 0 && *members == 10_000 && *nslices == 100 {
		pprof.StopCPUProfile()
		verdict(ctx, sink, last).Print(os.Stdout)
	}
	benchapp.Footer(os.Stdout)
}

// verdict sets the last mail beside a bare go-mail loop sending as many
// mails of the same size as the sink took, each with a file attached, at
// the e-mail kind's concurrency, right after the burst.
func verdict(ctx context.Context, sink *benchapp.Sink, last time.Duration) benchapp.Verdict {
	total, _ := sink.Counts()
	size := sink.MeanBytes()
	bare, err := benchapp.BareMailSized(ctx, total, 8, "bench", "Your store's report is attached.\n", size)
	if err != nil {
		log.Fatal(err)
	}
	ratio := last.Seconds() / bare.Elapsed.Seconds()
	return benchapp.Verdict{
		Target:   "per-recipient: 10,000 recipients over 100 slices (PDF + XLS): last mail accepted ≤ 5 s",
		Baseline: fmt.Sprintf("%s of %d KB each", bare, size/1000),
		Figure:   fmt.Sprintf("last mail %v after the instant; %.2f× the bare loop's time", last.Round(time.Millisecond), ratio),
		Ratio:    ratio, Limit: 5, Absolute: true, Value: last.Seconds(),
	}
}

// awaitHandover waits until the subscription's run at the instant is no
// longer running: its deliveries are in the outbox.
func awaitHandover(ctx context.Context, st *store.Store, sub string, begin time.Time) (time.Duration, store.Run) {
	for tick := time.NewTicker(5 * time.Millisecond); ; <-tick.C {
		runs, err := st.SubscriptionRuns(ctx, sub, 1, 0)
		if err != nil {
			log.Fatal(err)
		}
		if len(runs) == 1 && runs[0].State != store.RunRunning {
			return time.Since(begin), runs[0]
		}
		if time.Since(begin) > 10*time.Minute {
			log.Fatal("the run was not handed over in 10 minutes")
		}
	}
}

// count is how many deliveries a run has.
func count(ctx context.Context, st *store.Store, run string) int {
	counts, err := st.RunDeliveryCounts(ctx, run)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// scrape reads Herald's /metrics.
func scrape(opsURL string) map[string]float64 {
	m, err := apptest.Metrics(opsURL)
	if err != nil {
		log.Fatal(err)
	}
	return m
}

// rendered reads the files rendered by format between two scrapes, as "PDF 100, XLS 100".
func rendered(before, after map[string]float64) string {
	was := apptest.ByLabel(before, filesRendered, "format")
	var out []string
	for format, n := range apptest.ByLabel(after, filesRendered, "format") {
		out = append(out, fmt.Sprintf("%s %g", format, n-was[format]))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
