// Command reportmail measures one report mailed to many subscribers: 1,000
// subscriptions of one user attach the same demo report as PDF and XLS and
// fire at one instant, each mailing a real SMTP server on loopback. It starts
// Herald in-process on a driven clock, moves the clock to the instant, and
// times how long until the SMTP server accepted every mail. It counts the
// report executions and the files the engine rendered by format, the
// requests the API answered during the burst (none of them the engine's),
// the process's peak resident memory during the burst, and the copies of
// each attached file: the files written into the data folder (outside NATS's
// storage) per file attached, and the bytes the object store of delivery
// files took.
//
//	go run ./bench/reportmail [-subs 1000] [-report report.revenue_by_region] [-formats PDF,XLS]
//	go run ./bench/reportmail -rows 200000 -subs 50 -formats CSV,XLS
//
// With -rows, the subscriptions attach a report of that many rows instead,
// one per sale of a generated dataset in a project of its own: large files.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/bench/internal/mailcheck"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/store"
)

// The series that count the report's executions and the requests the API
// answered.
const (
	executionsMetric = "herald_engine_report_executions_total"
	requestsMetric   = "herald_http_requests_total"
)

func main() {
	nsubs := flag.Int("subs", 1000, "subscriptions")
	report := flag.String("report", "report.revenue_by_region", "identifier of the demo report to attach")
	formats := flag.String("formats", "PDF,XLS", "formats to attach, comma-separated")
	rows := flag.Int("rows", 0, "attach a generated report of this many rows instead of the demo's")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the burst, from the instant to the last mail, to this file")
	flag.Parse()
	ctx := context.Background()
	benchapp.Header(os.Stdout, "reportmail")
	dir, err := os.MkdirTemp("", "herald-reportmail")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	want := *nsubs + 1 // and the demo's own subscription, which fires every minute with the same report
	got := &mailcheck.Mails{}
	sink, err := benchapp.NewSink(want, benchapp.WithBody(got.See))
	if err != nil {
		log.Fatal(err)
	}
	defer sink.Close()
	clock := apptest.NewClock(time.Date(2026, 6, 1, 8, 59, 30, 0, time.UTC))
	configure := func(c *app.Config) {
		sec := c.Channels["smtp"].(*email.Settings)
		sec.Host, sec.Port, sec.TLSPolicy = "127.0.0.1", sink.Port(), "none"
	}

	// First start: the demo project and the subscriptions.
	h, stop, err := benchapp.Start(ctx, dir, configure, app.Options{Clock: clock, Demo: true})
	if err != nil {
		log.Fatal(err)
	}
	uri := reportURI(ctx, h, *report)
	if *rows > 0 {
		uri, *report = bigReport(ctx, h, *rows), fmt.Sprintf("a report of %d rows", *rows)
	}
	subscribe(ctx, h.App.Store(), uri, strings.Split(*formats, ","), *nsubs,
		strings.TrimPrefix(h.Profile, "/svc/account/profile/"), clock.Now())
	stop()

	// Second start loads them, with /metrics served.
	h, stop, err = benchapp.Start(ctx, dir, func(c *app.Config) {
		configure(c)
		c.Metrics.Listen = "127.0.0.1:0"
	}, app.Options{Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	time.Sleep(time.Second) // let the engine load and arm its timer
	if total, _ := sink.Counts(); total != 0 {
		log.Fatalf("%d mails before the instant", total)
	}
	before, files, objects := scrape(h.App.OpsURL()), benchapp.ListFiles(dir), benchapp.ObjectStoreBytes(dir)
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
	}
	begin := time.Now()
	clock.Advance(30 * time.Second)
	first, half, last := await(sink, want, begin)
	peak := benchapp.PeakRSS()
	after := scrape(h.App.OpsURL())
	fmt.Printf("%d subscriptions attaching %s as %s at one instant, mailed to an SMTP server on loopback\n",
		*nsubs, *report, *formats)
	fmt.Printf("report executions by the engine: %g; requests the API answered during the burst: %g\n",
		benchapp.Sum(after, executionsMetric)-benchapp.Sum(before, executionsMetric),
		benchapp.Sum(after, requestsMetric)-benchapp.Sum(before, requestsMetric))
	fmt.Printf("files rendered by the engine, by format: %s\n", rendered(after))
	fmt.Printf("peak RSS during the burst: %.0f MiB\n", peak)
	fmt.Printf("copies: %s; object store of delivery files: %+.1f MB\n", copies(files.Added(dir)),
		float64(benchapp.ObjectStoreBytes(dir)-objects)/1e6)
	total, _ := sink.Counts()
	fmt.Printf("mail bodies accepted: %.1f MB, %.0f KB a mail\n", float64(sink.Bytes())/1e6, float64(sink.Bytes())/float64(total)/1e3)
	fmt.Printf("the first of the %d mails accepted after %s, half after %s, the last after %s\n", want,
		first.Round(time.Millisecond), half.Round(time.Millisecond), last.Round(time.Millisecond))
	sum, err := got.Check(*nsubs, len(strings.Split(*formats, ",")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("attachments: %d mails carry the same %s files, checksum %.16s\n", *nsubs, *formats, sum)
	// The baseline, right after: as many mails of the same size, a file
	// attached to each, sent by a bare go-mail loop at the e-mail kind's
	// concurrency.
	size := sink.MeanBytes()
	bare, err := benchapp.BareMailSized(ctx, want, 8, "bench", "The report is attached.\n", size)
	if err != nil {
		log.Fatal(err)
	}
	v := benchapp.Verdict{
		Target:   "1,000 report subscribers (PDF + XLS): last mail accepted ≤ 1 s",
		Baseline: fmt.Sprintf("%s of %d KB each", bare, size/1000),
		Figure: fmt.Sprintf("last mail %v after the instant; %.2f× the bare loop's time", last.Round(time.Millisecond),
			last.Seconds()/bare.Elapsed.Seconds()),
		Ratio: last.Seconds() / bare.Elapsed.Seconds(), Limit: 1, Absolute: true, Value: last.Seconds(),
	}
	if *nsubs != 1000 || *rows != 0 || *formats != "PDF,XLS" {
		fmt.Printf("no target for this shape: %s; ratio %.2f\n", v.Figure, v.Ratio)
	} else {
		v.Print(os.Stdout)
	}
	benchapp.Footer(os.Stdout)
}

// filesMetric counts the files of attached reports the engine rendered.
const filesMetric = "herald_engine_report_files_total"

// scrape reads Herald's /metrics.
func scrape(opsURL string) map[string]float64 {
	m, err := apptest.Metrics(opsURL)
	if err != nil {
		log.Fatal(err)
	}
	return m
}

// rendered reads filesMetric from Herald's /metrics, as "HTML 1, PDF 1".
func rendered(m map[string]float64) string {
	var out []string
	for format, n := range apptest.ByLabel(m, filesMetric, "format") {
		out = append(out, fmt.Sprintf("%s %g", format, n))
	}
	if len(out) == 0 {
		return "none"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// copies says how many files the burst wrote into the data folder for each
// file attached (the files the engine keeps with the runs, in "runs"),
// leaving out the execution results ("results"), and in which folders.
func copies(added map[string]int) string {
	attached := added["runs"]
	total := 0
	var where []string
	for folder, n := range added {
		if folder == "results" {
			continue
		}
		total += n
		where = append(where, fmt.Sprintf("%s %d", folder, n))
	}
	slices.Sort(where)
	if attached == 0 {
		return fmt.Sprintf("no file attached (%s)", strings.Join(where, ", "))
	}
	return fmt.Sprintf("%.2f files written per file attached (%s)", float64(total)/float64(attached), strings.Join(where, ", "))
}

// await waits until want mails have arrived at sink and returns when the
// first, half and the last of them came after begin; it stops the CPU
// profile, if one runs, at the last. It fails when two mails share a
// Message-ID or the mails take more than five minutes.
func await(sink *benchapp.Sink, want int, begin time.Time) (first, half, last time.Duration) {
	for tick := time.NewTicker(2 * time.Millisecond); ; <-tick.C {
		total, distinct := sink.Counts()
		if total >= 1 && first == 0 {
			first = time.Since(begin)
		}
		if total >= want/2 && half == 0 {
			half = time.Since(begin)
		}
		if total >= want {
			last = time.Since(begin)
			if distinct != total {
				log.Fatalf("%d mails, %d distinct Message-IDs", total, distinct)
			}
			pprof.StopCPUProfile()
			return first, half, last
		}
		if time.Since(begin) > 5*time.Minute {
			log.Fatalf("timed out: %d of %d mails", total, want)
		}
	}
}

// reportURI finds a demo report by its identifier.
func reportURI(ctx context.Context, h *benchapp.Herald, identifier string) string {
	md, err := h.Metadata(ctx)
	if err != nil {
		log.Fatalf("demo project: %v", err)
	}
	var list struct {
		Query struct {
			Entries []struct{ Link, Identifier string } `json:"entries"`
		} `json:"query"`
	}
	if err := h.Client.Do(ctx, "GET", md+"/query/reports", nil, &list); err != nil {
		log.Fatal(err)
	}
	for _, e := range list.Query.Entries {
		if e.Identifier == identifier {
			return e.Link
		}
	}
	log.Fatalf("no report %s in the demo", identifier)
	return ""
}

// subscribe stores n subscriptions of the admin, hourly at minute 0, each
// mailing the report to the admin's demo channel.
func subscribe(ctx context.Context, st *store.Store, report string, formats []string, n int, admin string, now time.Time) {
	chans, err := st.Channels(ctx, admin)
	if err != nil || len(chans) == 0 {
		log.Fatalf("admin channel: %v", err)
	}
	pid := strings.Split(report, "/")[3]
	for i := range n {
		sub := store.Subscription{ID: fmt.Sprintf("bench%06d", i), ProjectID: pid, Owner: admin, Title: "Daily report",
			Enabled: true, Channels: []string{chans[0].ID}, Created: now, Updated: now,
			Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: "0 0 * * * *", Timezone: "UTC"}},
				Condition: "true", Message: "The daily report is attached.", FireMode: store.FireAlways,
				Attachments: []store.ReportAttachment{{Report: report, Formats: formats}}}}
		if err := st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
			log.Fatal(err)
		}
	}
}
