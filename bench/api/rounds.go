package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/heraldhq/herald/bench/benchapp"
)

// figures are one server's throughput and latency.
type figures struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
	// serverCPU and loadCPU are the shares of their CPUs the server
	// process and the load generator used (-1: not read). A server short
	// of 100 % while the generator is too was not the bottleneck or was
	// not given its CPUs in full; a generator near 100 % may be one.
	serverCPU, loadCPU float64
}

// figuresOf reads the figures off a load generator's report.
func figuresOf(r loadReport) figures {
	return figures{rps: r.rps(), p50: r.Latency.Quantile(0.50), p99: r.Latency.Quantile(0.99), errors: r.Errors,
		serverCPU: r.ServerCPU, loadCPU: r.LoadCPU}
}

// side is one of the servers measured.
type side struct {
	name string
	url  string
	// header, when not nil, gives the header that every request carries.
	header func(context.Context) (http.Header, error)
	// profile is whether its last measurement is CPU-profiled.
	profile bool
	rounds  []figures
}

// measure loads the side once and keeps its figures.
func (s *side) measure(ctx context.Context, cfg config, last bool) (figures, error) {
	spec := loadSpec{URL: s.url, Conns: cfg.conns, Warmup: cfg.warmup, Duration: cfg.dur, CPUs: cfg.split.Load}
	if s.header != nil {
		h, err := s.header(ctx)
		if err != nil {
			return figures{}, err
		}
		spec.Header = h
	}
	stopProfile := func() error { return nil }
	if s.profile && last {
		var err error
		if stopProfile, err = benchapp.StartCPUProfile(cfg.cpuprofile); err != nil {
			return figures{}, err
		}
	}
	r, err := runLoad(ctx, spec)
	if perr := stopProfile(); err == nil && perr != nil {
		err = fmt.Errorf("cpu profile: %w", perr)
	}
	if err != nil {
		return figures{}, fmt.Errorf("%s: %w", s.name, err)
	}
	f := figuresOf(r)
	s.rounds = append(s.rounds, f)
	return f, nil
}

// compare measures bare and herald cfg.rounds times, one after the other,
// alternating which goes first, and writes each round's figures to out.
func compare(ctx context.Context, out io.Writer, cfg config, bare, herald *side) error {
	fmt.Fprintf(out, "%-6s %-7s %8s %9s %9s %6s %8s %8s\n", "round", "server", "req/s", "p50", "p99", "errors", "srv CPU", "load CPU")
	for i := range cfg.rounds {
		order := []*side{bare, herald}
		if i%2 == 1 {
			order = []*side{herald, bare}
		}
		for _, s := range order {
			f, err := s.measure(ctx, cfg, i == cfg.rounds-1)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-6d %-7s %s\n", i+1, s.name, f)
		}
		fmt.Fprintf(out, "%-6d ratio herald/bare throughput %.2f\n", i+1, herald.rounds[i].rps/bare.rounds[i].rps)
	}
	return nil
}

// String is the figures in the columns compare writes.
func (f figures) String() string {
	return fmt.Sprintf("%8.0f %9s %9s %6d %8s %8s", f.rps, ms(f.p50), ms(f.p99), f.errors, percent(f.serverCPU), percent(f.loadCPU))
}

// percent writes a share as a percentage, or "?" for -1.
func percent(share float64) string {
	if share < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f %%", 100*share)
}

// ms writes d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// median is each of the figures' median over the rounds, and their errors'
// sum.
func median(rounds []figures) figures {
	var m figures
	m.rps = medianOf(rounds, func(f figures) float64 { return f.rps })
	m.p50 = time.Duration(medianOf(rounds, func(f figures) float64 { return float64(f.p50) }))
	m.p99 = time.Duration(medianOf(rounds, func(f figures) float64 { return float64(f.p99) }))
	m.serverCPU = medianOf(rounds, func(f figures) float64 { return f.serverCPU })
	m.loadCPU = medianOf(rounds, func(f figures) float64 { return f.loadCPU })
	for _, f := range rounds {
		m.errors += f.errors
	}
	return m
}

// medianOf is the median of one of the figures over the rounds: the mean of
// the middle two of an even number.
func medianOf(rounds []figures, of func(figures) float64) float64 {
	if len(rounds) == 0 {
		return 0
	}
	v := make([]float64, len(rounds))
	for i, f := range rounds {
		v[i] = of(f)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// summarize writes the medians of both sides, the ratio of their
// throughputs and the verdict from it. Beside it, the ratio of requests per
// second of the server's CPU, which another tenant of the machine taking
// some of the server's CPU does not move.
func summarize(out io.Writer, bare, herald *side) {
	mb, mh := median(bare.rounds), median(herald.rounds)
	fmt.Fprintf(out, "%-6s %-7s %s\n", "median", bare.name, mb)
	fmt.Fprintf(out, "%-6s %-7s %s\n", "median", herald.name, mh)
	ratio := mh.rps / mb.rps
	fmt.Fprintf(out, "ratio herald/bare throughput (medians): %.2f\n", ratio)
	perCPU := ""
	if mb.serverCPU > 0 && mh.serverCPU > 0 {
		perCPU = fmt.Sprintf("; per second of the server's CPU %.2f", (mh.rps/mh.serverCPU)/(mb.rps/mb.serverCPU))
		fmt.Fprintf(out, "ratio herald/bare requests per second of the server's CPU (medians): %.2f\n", (mh.rps/mh.serverCPU)/(mb.rps/mb.serverCPU))
	}
	benchapp.Verdict{
		Target:   fmt.Sprintf("authenticated GET ≥ %.2f of a bare handler's throughput (medians of %d rounds)", minRatio, len(herald.rounds)),
		Baseline: fmt.Sprintf("bare net/http handler, same bytes and framing: %.0f req/s, p99 %s", mb.rps, ms(mb.p99)),
		Figure:   fmt.Sprintf("%.0f req/s, p99 %s%s", mh.rps, ms(mh.p99), perCPU),
		Ratio:    ratio, Limit: minRatio, AtLeast: true,
	}.Print(out)
	benchapp.Footer(out)
}

// minRatio is the target: Herald's throughput at least this share of the bare
// handler's.
const minRatio = 0.5
