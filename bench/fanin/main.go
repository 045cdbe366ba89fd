// Command fanin measures alert fan-in: -subs subscriptions on -metrics metrics
// of the demo project fire at one instant, each mailing a real SMTP server on
// loopback. Herald runs in-process on a clock that flows like the real one
// but is set, before Herald's second start, a few seconds before the
// instant. Each run times, from the instant:
//
//   - evaluated and handed over: every run's outcome and delivery row are
//     committed (one transaction writes both);
//   - the last mail accepted by the SMTP server.
//
// It also counts the metric executions the engine made and the requests the
// API answered during the burst (none of them the engine's), reads the process's
// peak resident memory during the burst, and the scheduler's lateness
// histogram (herald_scheduler_lateness_seconds) over every fire of the
// burst's minute: the burst itself and -unrelated subscriptions that fire
// every second with a condition that needs no metric.
//
//	go run ./bench/fanin [-subs 10000] [-metrics 100] [-runs 5] [-unrelated 100]
//	go run ./bench/fanin -subs 100000 -metrics 1000 -runs 1
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"time"

	"github.com/heraldhq/herald/bench/benchapp"
)

func main() {
	var o options
	flag.IntVar(&o.subs, "subs", 10_000, "subscriptions firing at the instant")
	flag.IntVar(&o.metrics, "metrics", 100, "distinct metrics they evaluate")
	flag.IntVar(&o.unrelated, "unrelated", 100, "subscriptions firing every second, with no metric")
	flag.IntVar(&o.workers, "workers", 8, "engine workers")
	flag.DurationVar(&o.lead, "lead", 5*time.Second, "how long before the instant Herald's second start is")
	runs := flag.Int("runs", 1, "runs, each on a fresh data folder")
	verbose := flag.Bool("v", false, "print progress while the burst runs")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the last run's burst to this file")
	blockprofile := flag.String("blockprofile", "", "write a profile of where goroutines waited during the last run's burst to this file")
	tracefile := flag.String("trace", "", "write an execution trace of the last run's burst to this file (go tool trace)")
	flag.BoolVar(&o.profileHandover, "profile-handover", false, "end the profiles when the burst is handed over, not at the last mail")
	flag.Parse()
	o.verbose = *verbose
	ctx := context.Background()

	benchapp.Header(os.Stdout, "fanin")
	fmt.Printf("%d subscriptions on %d metrics firing at one instant, %d more every second, %d engine workers\n",
		o.subs, o.metrics, o.unrelated, o.workers)
	fmt.Println("lateness: the scheduler's, of the burst's second (the burst and the unrelated triggers due with it), then of")
	fmt.Println("every later fire until the last mail (the unrelated triggers only); CPU: the process's (Herald and the SMTP")
	fmt.Println("server), from a second before the instant to the last mail")
	fmt.Printf("%-4s %10s %8s %8s %10s %7s %9s | %7s %8s %8s | %6s %8s %8s\n", "run", "executions", "requests", "handed", "last mail", "CPU", "peak RSS",
		"fires", "p99", "max", "later", "p99", "max")
	var handed, mailed, bares []time.Duration
	var rss []float64
	var bare benchapp.Bare
	for i := range *runs {
		if i == *runs-1 {
			o.profile, o.blockProfile, o.trace = *cpuprofile, *blockprofile, *tracefile
		}
		r := run(ctx, o)
		handed, mailed = append(handed, r.handed), append(mailed, r.lastMail)
		fmt.Printf("%-4d %10d %8d %8s %10s %6.2fs %5.0f MiB | %7d %8s %8s | %6d %8s %8s\n", i+1, r.executions, r.apiRequests, r.handed.Round(time.Millisecond),
			r.lastMail.Round(time.Millisecond), r.cpu.Seconds(), r.peakRSS, r.burst.count, r.burst.p99(), r.burst.max(),
			r.later.count, r.later.p99(), r.later.max())
		rss = append(rss, r.peakRSS)
		fmt.Printf("     values: each of the %d subscriptions mailed once with its metric's value; checksum %016x\n", o.subs, r.checksum)
		// The baseline, right after: the same number of mails sent by a bare
		// go-mail loop at the e-mail kind's concurrency, in this process.
		b, err := benchapp.BareMail(ctx, o.subs, emailConcurrency, "bench", "Revenue rose 3% to 2,100.\n")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("     %s\n", b)
		bare, bares = b, append(bares, b.Elapsed)
	}
	if *runs > 1 {
		fmt.Printf("median: handed over %s, last mail %s, bare loop %s\n", median(handed).Round(time.Millisecond),
			median(mailed).Round(time.Millisecond), median(bares).Round(time.Millisecond))
	}
	bare.Elapsed = median(bares)
	verdicts(os.Stdout, o, median(handed), median(mailed), slices.Max(rss), bare, *runs)
	benchapp.Footer(os.Stdout)
}

// emailConcurrency is the e-mail kind's sends at once by default, which
// the baseline uses too.
const emailConcurrency = 8

// verdicts prints the targets of the two sizes the issue names, each from
// the medians of the runs, beside the bare loop's time for as many mails
// (the ratio); other sizes print only the ratios.
func verdicts(w io.Writer, o options, handed, mailed time.Duration, rss float64, bare benchapp.Bare, runs int) {
	ratio := func(d time.Duration) float64 { return d.Seconds() / bare.Elapsed.Seconds() }
	base := fmt.Sprintf("%s (median of %d runs)", bare, runs)
	fig := func(what string, d time.Duration) string {
		return fmt.Sprintf("%s %v from the instant (median of %d runs); %.2f× the bare loop's time", what, d.Round(time.Millisecond), runs, ratio(d))
	}
	var vs []benchapp.Verdict
	switch {
	case o.subs == 10_000 && o.metrics == 100:
		vs = []benchapp.Verdict{
			{Target: "10,000 on 100 metrics: handed over ≤ 0.5 s", Baseline: base, Figure: fig("handed over", handed),
				Ratio: ratio(handed), Limit: 0.5, Absolute: true, Value: handed.Seconds()},
			{Target: "10,000 on 100 metrics: every mail accepted ≤ 2 s", Baseline: base, Figure: fig("last mail", mailed),
				Ratio: ratio(mailed), Limit: 2, Absolute: true, Value: mailed.Seconds()},
		}
	case o.subs == 100_000 && o.metrics == 1000:
		vs = []benchapp.Verdict{
			{Target: "100,000 on 1,000 metrics: handed over ≤ 5 s", Baseline: base, Figure: fig("handed over", handed),
				Ratio: ratio(handed), Limit: 5, Absolute: true, Value: handed.Seconds()},
			{Target: "100,000 on 1,000 metrics: peak RSS ≤ 600 MiB", Baseline: "none (an absolute bound)", Figure: fmt.Sprintf("%.0f MiB, the most of %d runs", rss, runs),
				Ratio: rss / 600, Limit: 600, Absolute: true, Value: rss},
		}
	default:
		fmt.Fprintf(w, "handed over %.2f×, last mail %.2f× the %s\n", ratio(handed), ratio(mailed), base)
	}
	for _, v := range vs {
		v.Print(w)
	}
}

// options are what one run sets up.
type options struct {
	subs, metrics, unrelated, workers int
	lead                              time.Duration
	verbose                           bool
	profile                           string // CPU profile of the burst, or ""
	blockProfile                      string // blocking profile of the burst, or ""
	trace                             string // execution trace of the burst, or ""
	profileHandover                   bool   // the profiles end at the hand-over
}

// startProfile starts a CPU profile into path and returns its stop.
func startProfile(path string) func() {
	return startInto(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startBlockProfile records where goroutines wait (channels, locks, selects)
// until its stop writes the profile into path.
func startBlockProfile(path string) func() {
	runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	return func() {
		f, err := os.Create(path)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("block").WriteTo(f, 0); err != nil {
			log.Fatal(err)
		}
		runtime.SetBlockProfileRate(0)
	}
}

// startTrace writes an execution trace into path until its stop.
func startTrace(path string) func() { return startInto(path, trace.Start, trace.Stop) }

// startInto creates path and starts writing into it with start; the stop it
// returns calls stop and closes the file.
func startInto(path string, start func(io.Writer) error, stop func()) func() {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := start(f); err != nil {
		log.Fatal(err)
	}
	return func() { stop(); f.Close() }
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
