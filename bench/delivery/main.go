package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
)

// cpuProfile, when set, is where the pipeline side's CPU profile goes.
var cpuProfile string

// latency is how far the SMTP server is from every side, each way.
var latency time.Duration

func main() {
	n := flag.Int("n", 10000, "e-mails to deliver on each side")
	conc := flag.Int("c", 8, "SMTP connections (and concurrent sends) on each side")
	rounds := flag.Int("rounds", 5, "rounds of both sides, alternating which goes first")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the pipeline side to this file")
	flag.IntVar(&floorBatch, "floorbatch", floorBatch, "messages the floor side fetches, sends and records at a time")
	flag.DurationVar(&latency, "latency", 0, "put the SMTP server this far from every side, each way, as a relay on another machine")
	flag.Parse()
	// Both sides run under the garbage collector's target Herald sets for itself.
	app.DefaultRuntimeConfig().Apply(os.Getenv)
	if err := run(context.Background(), os.Stdout, *n, *conc, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "delivery bench:", err)
		os.Exit(1)
	}
}

// round is what one round measured.
type round struct {
	bare, lean, floor, pipeline result
	ledger                      time.Duration // from start until every run was rolled up
}

// compare runs the three sides rounds times, each pipeline round in a fresh
// data folder under dir, turning which side goes first.
func compare(ctx context.Context, dir string, n, conc, rounds int) ([]round, error) {
	out := make([]round, rounds)
	for i := range out {
		r := &out[i]
		sides := []func() error{
			func() (err error) { r.bare, err = bare(ctx, n, conc, false); return err },
			func() (err error) { r.lean, err = bare(ctx, n, conc, true); return err },
			func() (err error) {
				r.floor, err = floor(ctx, filepath.Join(dir, fmt.Sprint("floor", i)), n, conc)
				return err
			},
			func() (err error) {
				r.pipeline, r.ledger, err = pipeline(ctx, filepath.Join(dir, fmt.Sprint(i)), n, conc)
				return err
			},
		}
		for j := range sides {
			if err := sides[(i+j)%len(sides)](); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// summary is the median and best of the rounds.
type summary struct {
	bare, lean, floor, pipeline, ledger     float64 // median deliveries per second
	bestBare, bestLean, bestPipeline        float64
	bareCPU, leanCPU, floorCPU, pipelineCPU time.Duration // median process CPU time per e-mail
}

func summarize(rs []round) summary {
	med := func(f func(round) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	best := func(f func(round) float64) float64 {
		var b float64
		for _, r := range rs {
			b = max(b, f(r))
		}
		return b
	}
	bareRate := func(r round) float64 { return r.bare.perSecond() }
	leanRate := func(r round) float64 { return r.lean.perSecond() }
	pipeRate := func(r round) float64 { return r.pipeline.perSecond() }
	return summary{
		bare:         med(bareRate),
		lean:         med(leanRate),
		floor:        med(func(r round) float64 { return r.floor.perSecond() }),
		pipeline:     med(pipeRate),
		ledger:       med(func(r round) float64 { return float64(r.pipeline.n) / r.ledger.Seconds() }),
		bestBare:     best(bareRate),
		bestLean:     best(leanRate),
		bestPipeline: best(pipeRate),
		bareCPU:      time.Duration(med(func(r round) float64 { return float64(r.bare.cpuPerMail()) })),
		leanCPU:      time.Duration(med(func(r round) float64 { return float64(r.lean.cpuPerMail()) })),
		floorCPU:     time.Duration(med(func(r round) float64 { return float64(r.floor.cpuPerMail()) })),
		pipelineCPU:  time.Duration(med(func(r round) float64 { return float64(r.pipeline.cpuPerMail()) })),
	}
}

func run(ctx context.Context, out io.Writer, n, conc, rounds int) error {
	dir, err := os.MkdirTemp("", "herald-delivery-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	benchapp.Header(out, "delivery")
	rs, err := compare(ctx, dir, n, conc, max(rounds, 1))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d e-mails per side, %d connections, GOMAXPROCS %d, %d rounds, the SMTP server %v away each way\n",
		n, conc, runtime.GOMAXPROCS(0), len(rs), latency)
	for i, r := range rs {
		fmt.Fprintf(out, "round %d: bare %6.0f/s  lean %6.0f/s  floor %6.0f/s  pipeline %6.0f/s  (%.0f%%, %.0f%%)\n", i+1,
			r.bare.perSecond(), r.lean.perSecond(), r.floor.perSecond(), r.pipeline.perSecond(),
			100*r.pipeline.perSecond()/r.bare.perSecond(), 100*r.pipeline.perSecond()/r.lean.perSecond())
	}
	s := summarize(rs)
	us := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	fmt.Fprintf(out, "bare go-mail loop (median):           %6.0f/s  %v CPU per e-mail\n", s.bare, us(s.bareCPU))
	fmt.Fprintf(out, "lean loop, no NOOP or RSET (median):  %6.0f/s  %v CPU per e-mail\n", s.lean, us(s.leanCPU))
	fmt.Fprintf(out, "floor, lean loop + outbox, stream, ledger (median): %6.0f/s  %v CPU per e-mail\n", s.floor, us(s.floorCPU))
	fmt.Fprintf(out, "pipeline, accepted by SMTP (median):  %6.0f/s  %v CPU per e-mail\n", s.pipeline, us(s.pipelineCPU))
	fmt.Fprintf(out, "pipeline, ledger complete (median):   %6.0f/s\n", s.ledger)
	fmt.Fprintf(out, "pipeline / bare, mails a second: median %.1f%%, best of each %.1f%%\n",
		100*s.pipeline/s.bare, 100*s.bestPipeline/s.bestBare)
	fmt.Fprintf(out, "pipeline / lean, mails a second: median %.1f%%, best of each %.1f%%\n",
		100*s.pipeline/s.lean, 100*s.bestPipeline/s.bestLean)
	fmt.Fprintf(out, "CPU a mail: floor (batches of %d) / bare %.2f, the least the guarantees cost with these parts; pipeline / floor %.2f\n",
		floorBatch, float64(s.floorCPU)/float64(s.bareCPU), float64(s.pipelineCPU)/float64(s.floorCPU))
	ratio := float64(s.pipelineCPU) / float64(s.bareCPU)
	benchapp.Verdict{
		Target:   fmt.Sprintf("CPU a mail ≤ %.2f× the bare go-mail loop's (the process's CPU, the SMTP server's included, medians of %d rounds)", maxCPURatio, len(rs)),
		Baseline: fmt.Sprintf("bare go-mail loop, %d connections: %v a mail (%.0f mails/s)", conc, us(s.bareCPU), s.bare),
		Figure:   fmt.Sprintf("pipeline, outbox to accepted: %v a mail (%.0f mails/s; %.2f× the lean loop's %v)", us(s.pipelineCPU), s.pipeline, float64(s.pipelineCPU)/float64(s.leanCPU), us(s.leanCPU)),
		Ratio:    ratio, Limit: maxCPURatio,
	}.Print(out)
	benchapp.Footer(out)
	return nil
}

// maxCPURatio is the target: the pipeline's CPU a mail at most this many
// times the bare loop's.
const maxCPURatio = 1.25
