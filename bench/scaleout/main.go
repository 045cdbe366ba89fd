package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 5000, "deliveries at the instant: up to 1000 (one channel per subscription) or a multiple of 1000")
	conc := flag.Int("conc", 8, "SMTP sends at once in each sending process")
	delay := flag.Duration("delay", 20*time.Millisecond, "how long the SMTP sink takes to answer each message")
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
	if conc < 1 || delay <= 0 || runs < 1 {
		return errors.New("-conc and -runs must be at least 1, -delay above zero")
	}
	p := params{burst: b, conc: conc, delay: delay, timeout: timeout}
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
	fmt.Fprintf(out, "%d deliveries at one instant (%d subscriptions × %d channel(s) each), SMTP sink answering each after %v, "+
		"%d sends at once per sending process, %d CPUs, %d run(s), medians\n\n",
		n, p.burst.subscriptions, p.burst.perRun, p.delay, p.conc, runtime.NumCPU(), len(results[0]))
	fmt.Fprintln(out, "| scenario | senders | instant → last accepted | deliveries/s | vs single process | bound (senders × conc / delay) | of bound | mails total / distinct |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
	single := median(results[0]).perSecond(n)
	for i, s := range scenarios {
		m := median(results[i])
		rate, bound := m.perSecond(n), s.bound(p)
		fmt.Fprintf(out, "| %s | %d | %.2f s | %.0f | %.2f× | %.0f/s | %.0f%% | %d / %d |\n", s.name, s.senders(),
			m.elapsed.Seconds(), rate, rate/single, bound, 100*rate/bound, m.total, m.distinct)
	}
}
