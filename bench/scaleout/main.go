package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/heraldhq/herald/bench/benchapp"
)

func main() {
	n := flag.Int("n", 5000, "deliveries at the instant: up to 1000 (one channel per subscription) or a multiple of 1000")
	conc := flag.Int("conc", 16, "SMTP sends at once in all, shared evenly by the sending processes")
	delay := flag.Duration("delay", 0, "how long the SMTP sink waits before it answers each message, after parsing it")
	runs := flag.Int("runs", 1, "runs of every scenario; the table shows medians")
	timeout := flag.Duration("timeout", 5*time.Minute, "longest a burst may take, from its instant")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, os.Stderr, *n, *conc, *delay, *runs, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "scale-out bench:", err)
		stop()
		os.Exit(1)
	}
}

// run checks the flags, builds the binaries, measures every scenario runs
// times (each run starting with the next scenario), printing progress to
// log, and prints the table to out.
func run(ctx context.Context, out, log io.Writer, n, conc int, delay time.Duration, runs int, timeout time.Duration) error {
	b, err := burstOf(n)
	if err != nil {
		return err
	}
	if conc < 2 || delay < 0 || runs < 1 {
		return errors.New("-conc must be at least 2, -runs at least 1, -delay not below zero")
	}
	p := params{burst: b, conc: conc, delay: delay, timeout: timeout}
	benchapp.Header(out, "scaleout")
	fmt.Fprintln(log, "building herald and nats-server")
	bins, err := build(ctx)
	if err != nil {
		return err
	}
	defer bins.remove()
	results := make([][]measurement, len(scenarios))
	for r := range runs {
		for k := range scenarios {
			i := (r + k) % len(scenarios)
			s := scenarios[i]
			m, err := s.run(ctx, bins, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(log, "run %d/%d, %s: %d deliveries in %v, %.0f/s\n", r+1, runs, s.name, n,
				m.elapsed.Round(time.Millisecond), m.perSecond(n))
			results[i] = append(results[i], m)
		}
	}
	printTable(out, p, results)
	verdict(out, p, results)
	benchapp.Footer(out)
	return nil
}

// median is the run of median time (the slower of the two middle ones
// when there is an even number).
func median(ms []measurement) measurement {
	s := slices.SortedFunc(slices.Values(ms), func(a, b measurement) int { return cmp.Compare(a.elapsed, b.elapsed) })
	return s[len(s)/2]
}

// printTable writes the medians as a markdown table, with each scenario's
// rate beside the single process's and beside its senders' bound.
func printTable(out io.Writer, p params, results [][]measurement) {
	n := p.burst.deliveries()
	fmt.Fprintf(out, "%d deliveries at one instant (%d subscriptions × %d channel(s) each), SMTP sink parsing each message and answering %v after, "+
		"%d sends at once in all, %d CPUs, workers %s, %d run(s), medians\n\n",
		n, p.burst.subscriptions, p.burst.perRun, p.delay, p.conc, runtime.NumCPU(), pinning(), len(results[0]))
	fmt.Fprintln(out, "| scenario | senders × conc | instant → last accepted | deliveries/s | vs single process | bound (senders × conc / delay) | of bound | mails total / distinct |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
	single := median(results[0]).perSecond(n)
	for i, s := range scenarios {
		m := median(results[i])
		rate, bound := m.perSecond(n), s.bound(p)
		bounds, of := "—", "—" // no delay: the CPU bounds it
		if !math.IsInf(bound, 1) {
			bounds, of = fmt.Sprintf("%.0f/s", bound), fmt.Sprintf("%.0f%%", 100*rate/bound)
		}
		fmt.Fprintf(out, "| %s | %d × %d | %.2f s | %.0f | %.2f× | %s | %s | %d / %d |\n", s.name, s.senders(), s.conc(p),
			m.elapsed.Seconds(), rate, rate/single, bounds, of, m.total, m.distinct)
	}
}

// pinning says where the two workers run.
func pinning() string {
	if runtime.NumCPU() < 2 {
		return "unpinned (a single core: the processes share it)"
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return "unpinned (no taskset)"
	}
	return "pinned to a core each (taskset); the control process, nats-server and the sink unpinned"
}

// verdict prints the target: two worker processes deliver the burst at
// least as fast as one process with every role, at the same total
// concurrency, against a sink that spends CPU on each message.
func verdict(out io.Writer, p params, results [][]measurement) {
	n := p.burst.deliveries()
	single, two := median(results[0]), median(results[len(scenarios)-1])
	benchapp.Verdict{
		Target:   fmt.Sprintf("control + 2 workers ≥ 1.00× the single process's deliveries/s, %d sends at once in all", p.conc),
		Baseline: fmt.Sprintf("single process: %.0f/s (%.2f s, median of %d)", single.perSecond(n), single.elapsed.Seconds(), len(results[0])),
		Figure:   fmt.Sprintf("control + 2 workers: %.0f/s (%.2f s)", two.perSecond(n), two.elapsed.Seconds()),
		Ratio:    two.perSecond(n) / single.perSecond(n), Limit: 1, AtLeast: true,
	}.Print(out)
}
