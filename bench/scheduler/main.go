// Command scheduler measures how late subscriptions fire: Herald's heap
// scheduler and robfig/cron's own Cron runner hold the same entries (mixed
// six-field schedules from every second to daily, plus a burst of 1,000, or
// -burst, firing at one instant) and run in real time, one after the other, in the
// same process. Lateness is the time from a fire's scheduled instant to the
// moment the scheduler hands it over (Herald's, which hands an instant's
// fires over in one call) or calls its job (robfig's, whose schedules remember
// the instants they gave the runner, one call per fire); fires of the
// first two seconds after a runner starts are warm-up and not counted. Each runner gets its own burst
// instant, half-way through its own run, once its entries are loaded and it
// has started, so that both runners fire the burst. "at burst" counts the
// fires scheduled for the burst instant: the burst and every other schedule
// that matches that second.
//
//	go run ./bench/scheduler [-n 100000] [-d 20s] [-runs 1] [-burst 1000] [-runner both|herald|robfig]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	robfig "github.com/robfig/cron/v3"

	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/store"
)

func main() {
	n := flag.Int("n", 100_000, "subscriptions")
	d := flag.Duration("d", 20*time.Second, "how long each runner runs")
	runs := flag.Int("runs", 1, "runs of each runner, in turn")
	which := flag.String("runner", "both", "herald, robfig or both")
	flag.IntVar(&burst, "burst", burst, "subscriptions firing together at the burst instant")
	flag.DurationVar(&loadMargin, "load", loadMargin, "how long loading a runner's entries may take")
	flag.BoolVar(&verbose, "v", false, "print each instant whose latest fire was later than the target")
	flag.Parse()
	benchapp.Header(os.Stdout, "scheduler")
	fmt.Printf("%d subscriptions, %s each, GOMAXPROCS=%d, burst of %d at +%s of each run, %d runs\n", *n, *d, runtime.GOMAXPROCS(0), burst, *d/2, *runs)
	fmt.Printf("%-7s %9s %10s %10s %10s %10s %10s %9s %9s  %s\n", "runner", "fires", "p50", "p99", "max", "burst max", "at burst", "cpu", "heap MiB", "load average after")
	var herald, robfigs []result
	for range max(*runs, 1) {
		if *which == "both" || *which == "herald" {
			r := run(*n, *d, loadHerald)
			report("herald", r)
			herald = append(herald, r)
		}
		if *which == "both" || *which == "robfig" {
			r := run(*n, *d, loadRobfig)
			report("robfig", r)
			robfigs = append(robfigs, r)
		}
	}
	if len(herald) > 0 && len(robfigs) > 0 {
		verdict(herald, robfigs)
	}
	benchapp.Footer(os.Stdout)
}

// maxP99 is the target: Herald's p99 lateness at most this in every run.
const maxP99 = 10 * time.Millisecond

// verdict prints the target's outcome: Herald's p99 in every run against
// the bound, and its ratio to robfig's (the medians of the runs).
func verdict(herald, robfigs []result) {
	var met int
	var worst time.Duration
	var hp, rp []time.Duration
	for _, r := range herald {
		p := r.quantile(0.99)
		if p <= maxP99 {
			met++
		}
		worst = max(worst, p)
		hp = append(hp, p)
	}
	for _, r := range robfigs {
		rp = append(rp, r.quantile(0.99))
	}
	h, rb := median(hp), median(rp)
	benchapp.Verdict{
		Target:   fmt.Sprintf("p99 lateness ≤ %v in every run (%d of %d here)", maxP99, met, len(herald)),
		Baseline: fmt.Sprintf("robfig/cron's Cron runner, same entries, lateness from the scheduled instant to the callback: p99 %v (median of %d)", rb.Round(time.Microsecond), len(rp)),
		Figure:   fmt.Sprintf("p99 %v (median of %d), worst run %v", h.Round(time.Microsecond), len(hp), worst.Round(time.Microsecond)),
		Ratio:    float64(h) / float64(rb), Absolute: true, Value: float64(worst), Limit: float64(maxP99),
	}.Print(os.Stdout)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// verbose prints the instants whose latest fire missed the target (-v).
var verbose bool

// burst is how many subscriptions fire together at the burst instant (-burst).
var burst = 1000

// loadMargin is how long loading a runner's entries may take (-load): the
// burst instant is this much plus half the run after the specs are made.
var loadMargin = 20 * time.Second

// A loader loads specs into a runner reporting to c and returns the function
// that runs it until stop is closed.
type loader func(specs []string, c *collector) func(stop <-chan struct{})

// run loads n specs whose burst fires at an instant d/2 after the runner
// starts and measures the runner for d from its start.
func run(n int, d time.Duration, load loader) result {
	burstAt := time.Now().Truncate(time.Second).Add(loadMargin + d/2)
	c := &collector{burstAt: burstAt, lat: make([]time.Duration, 0, 1<<20), worst: map[time.Time]time.Duration{}}
	began := time.Now()
	runner := load(makeSpecs(n, burstAt), c)
	fmt.Fprintf(os.Stderr, "loaded %d entries in %v\n", n, time.Since(began).Round(time.Millisecond))
	if wait := time.Until(burstAt.Add(-d / 2)); wait > 0 {
		time.Sleep(wait) // start the runner d/2 before the burst
	} else {
		log.Fatalf("loading %d entries took longer than %s (-load)", n, loadMargin)
	}
	return measure(c, d, runner)
}

// makeSpecs returns n schedules: 1% every second, 9% every minute, 30% hourly,
// the rest daily (spread over the day), with the first burst of them firing
// together at burstAt instead.
func makeSpecs(n int, burstAt time.Time) []string {
	r := rand.New(rand.NewPCG(1, 2))
	specs := make([]string, n)
	b := burstAt.UTC()
	for i := range specs {
		switch p := i % 100; {
		case i < burst:
			specs[i] = fmt.Sprintf("%d %d %d * * *", b.Second(), b.Minute(), b.Hour())
		case p == 0:
			specs[i] = "* * * * * *"
		case p < 10:
			specs[i] = fmt.Sprintf("%d * * * * *", r.IntN(60))
		case p < 40:
			specs[i] = fmt.Sprintf("%d %d * * * *", r.IntN(60), r.IntN(60))
		default:
			specs[i] = fmt.Sprintf("%d %d %d * * *", r.IntN(60), r.IntN(60), r.IntN(24))
		}
	}
	return specs
}

type result struct {
	lat      []time.Duration
	burstMax time.Duration
	burstN   int
	cpu      time.Duration
	heapMiB  float64
}

type collector struct {
	mu       sync.Mutex
	lat      []time.Duration
	worst    map[time.Time]time.Duration // the latest fire of each instant
	from     time.Time                   // fires scheduled before this are warm-up and not counted
	burstAt  time.Time
	burstMax time.Duration
	burstN   int
}

// add records one fire scheduled for the instant scheduled, handed over now.
func (c *collector) add(scheduled, now time.Time) {
	c.mu.Lock()
	c.addLocked(scheduled, now)
	c.mu.Unlock()
}

// addLocked is add with c.mu held.
func (c *collector) addLocked(scheduled, now time.Time) {
	if scheduled.Before(c.from) {
		return
	}
	late := now.Sub(scheduled)
	c.lat = append(c.lat, late)
	if c.worst != nil {
		c.worst[scheduled] = max(c.worst[scheduled], late)
	}
	if scheduled.Equal(c.burstAt) {
		c.burstN++
		c.burstMax = max(c.burstMax, late)
	}
}

func loadHerald(specs []string, c *collector) func(stop <-chan struct{}) {
	// Herald hands an instant's fires over in one call: each is handed
	// over when the call is made (reading the clock for each, as the
	// collector records it, would charge the scheduler with the
	// benchmark's own bookkeeping).
	s := engine.NewScheduler(func(fs []engine.Fire) {
		now := time.Now()
		c.mu.Lock()
		for _, f := range fs {
			c.addLocked(f.At, now)
		}
		c.mu.Unlock()
	}, nil)
	now := time.Now()
	for i, spec := range specs {
		s.Set(store.Subscription{ID: fmt.Sprint(i), Enabled: true,
			Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: spec, Timezone: "UTC"}}}}, now)
	}
	return func(stop <-chan struct{}) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-stop; cancel() }()
		_ = s.Run(ctx)
	}
}

func loadRobfig(specs []string, c *collector) func(stop <-chan struct{}) {
	cr := robfig.New(robfig.WithSeconds(), robfig.WithLocation(time.UTC))
	parser := robfig.NewParser(robfig.Second | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow)
	for _, spec := range specs {
		sched, err := parser.Parse(spec)
		if err != nil {
			log.Fatal(err)
		}
		// robfig's jobs do not learn their scheduled instant: the schedule
		// remembers each instant it gives the runner, which fires the job
		// once for each, in order, and the job takes the oldest.
		ts := &timedSchedule{Schedule: sched}
		cr.Schedule(ts, robfig.FuncJob(func() { c.add(ts.take(), time.Now()) }))
	}
	return func(stop <-chan struct{}) {
		cr.Start()
		<-stop
		<-cr.Stop().Done()
	}
}

// timedSchedule is a robfig schedule that remembers the instants it gave
// the runner and not yet fired. The runner asks Next once as it starts and
// once after each fire (before or after the job's goroutine runs), so the
// oldest instant remembered is the one the job runs for.
type timedSchedule struct {
	robfig.Schedule
	mu  sync.Mutex
	due []time.Time
}

func (s *timedSchedule) Next(t time.Time) time.Time {
	n := s.Schedule.Next(t)
	s.mu.Lock()
	s.due = append(s.due, n)
	s.mu.Unlock()
	return n
}

// take returns the oldest instant given and not yet fired.
func (s *timedSchedule) take() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.due[0]
	s.due = s.due[1:]
	return at
}

// measure runs the scheduler for d and collects lateness, CPU time and heap.
func measure(c *collector, d time.Duration, run func(stop <-chan struct{})) result {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapAlloc) / (1 << 20)
	cpu0 := cpuTime()
	c.mu.Lock()
	c.from = time.Now().Truncate(time.Second).Add(2 * time.Second)
	c.mu.Unlock()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { run(stop); close(done) }()
	time.Sleep(d)
	close(stop)
	<-done
	c.mu.Lock()
	defer c.mu.Unlock()
	if verbose {
		var late []time.Time
		for at, d := range c.worst {
			if d > maxP99 {
				late = append(late, at)
			}
		}
		slices.SortFunc(late, time.Time.Compare)
		for _, at := range late {
			fmt.Fprintf(os.Stderr, "  instant %s: latest fire %v\n", at.Format("15:04:05"), c.worst[at].Round(time.Microsecond))
		}
	}
	return result{lat: c.lat, burstMax: c.burstMax, burstN: c.burstN, cpu: cpuTime() - cpu0, heapMiB: heap}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// quantile is the lateness below which share p of the fires fell.
func (r result) quantile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

func report(name string, r result) {
	slices.Sort(r.lat)
	fmt.Printf("%-7s %9d %10s %10s %10s %10s %10d %9s %9.0f  %s\n", name, len(r.lat), r.quantile(0.5).Round(time.Microsecond),
		r.quantile(0.99).Round(time.Microsecond), r.quantile(1).Round(time.Microsecond), r.burstMax.Round(time.Microsecond), r.burstN,
		r.cpu.Round(time.Millisecond), r.heapMiB, benchapp.LoadAverage())
}
