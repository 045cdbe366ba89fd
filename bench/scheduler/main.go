// Command scheduler measures how late subscriptions fire: Herald's heap
// scheduler and robfig/cron's own Cron runner hold the same entries (mixed
// six-field schedules from every second to daily, plus a burst of 1,000, or
// -burst, firing at one instant) and run in real time, one after the other, in the
// same process. Lateness is the time from a fire's scheduled instant to the
// moment the scheduler hands it over; fires of the first two seconds after a
// runner starts are warm-up and not counted. Each runner gets its own burst
// instant, half-way through its own run, once its entries are loaded and it
// has started, so that both runners fire the burst. "at burst" counts the
// fires scheduled for the burst instant: the burst and every other schedule
// that matches that second.
//
//	go run ./bench/scheduler [-n 100000] [-d 20s] [-burst 1000] [-runner both|herald|robfig]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	robfig "github.com/robfig/cron/v3"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/store"
)

func main() {
	n := flag.Int("n", 100_000, "subscriptions")
	d := flag.Duration("d", 20*time.Second, "how long each runner runs")
	which := flag.String("runner", "both", "herald, robfig or both")
	flag.IntVar(&burst, "burst", burst, "subscriptions firing together at the burst instant")
	flag.Parse()
	fmt.Printf("%d subscriptions, %s each, GOMAXPROCS=%d, burst of %d at +%s of each run\n", *n, *d, runtime.GOMAXPROCS(0), burst, *d/2)
	fmt.Printf("%-7s %9s %10s %10s %10s %10s %10s %9s %9s\n", "runner", "fires", "p50", "p99", "max", "burst max", "at burst", "cpu", "heap MiB")
	if *which == "both" || *which == "herald" {
		report("herald", run(*n, *d, loadHerald))
	}
	if *which == "both" || *which == "robfig" {
		report("robfig", run(*n, *d, loadRobfig))
	}
}

// burst is how many subscriptions fire together at the burst instant (-burst).
var burst = 1000

// loadMargin is how long loading a runner's entries may take: the burst
// instant is this much plus half the run after the specs are made.
const loadMargin = 10 * time.Second

// A loader loads specs into a runner reporting to c and returns the function
// that runs it until stop is closed.
type loader func(specs []string, c *collector) func(stop <-chan struct{})

// run loads n specs whose burst fires at an instant d/2 after the runner
// starts and measures the runner for d from its start.
func run(n int, d time.Duration, load loader) result {
	burstAt := time.Now().Truncate(time.Second).Add(loadMargin + d/2)
	c := &collector{burstAt: burstAt, lat: make([]time.Duration, 0, 1<<20)}
	runner := load(makeSpecs(n, burstAt), c)
	if wait := time.Until(burstAt.Add(-d / 2)); wait > 0 {
		time.Sleep(wait) // start the runner d/2 before the burst
	} else {
		log.Fatalf("loading %d entries took longer than %s", n, loadMargin)
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
	from     time.Time // fires scheduled before this are warm-up and not counted
	burstAt  time.Time
	burstMax time.Duration
	burstN   int
}

func (c *collector) add(scheduled time.Time) {
	late := time.Since(scheduled)
	c.mu.Lock()
	if scheduled.Before(c.from) {
		c.mu.Unlock()
		return
	}
	c.lat = append(c.lat, late)
	if scheduled.Equal(c.burstAt) {
		c.burstN++
		c.burstMax = max(c.burstMax, late)
	}
	c.mu.Unlock()
}

func loadHerald(specs []string, c *collector) func(stop <-chan struct{}) {
	s := engine.NewScheduler(func(fs []engine.Fire) {
		for _, f := range fs {
			c.add(f.At)
		}
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
	for i, spec := range specs {
		// robfig's jobs do not learn their scheduled instant. A burst entry
		// fires once in the run, at the burst instant; every other schedule
		// fires on a whole second, taken as the second the job started in.
		job := func() { c.add(time.Now().Truncate(time.Second)) }
		if i < burst {
			job = func() { c.add(c.burstAt) }
		}
		if _, err := cr.AddFunc(spec, job); err != nil {
			log.Fatal(err)
		}
	}
	return func(stop <-chan struct{}) {
		cr.Start()
		<-stop
		<-cr.Stop().Done()
	}
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
	return result{lat: c.lat, burstMax: c.burstMax, burstN: c.burstN, cpu: cpuTime() - cpu0, heapMiB: heap}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(name string, r result) {
	slices.Sort(r.lat)
	q := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			return 0
		}
		return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
	}
	fmt.Printf("%-7s %9d %10s %10s %10s %10s %10d %9s %9.0f\n", name, len(r.lat), q(0.5).Round(time.Microsecond),
		q(0.99).Round(time.Microsecond), q(1).Round(time.Microsecond), r.burstMax.Round(time.Microsecond), r.burstN,
		r.cpu.Round(time.Millisecond), r.heapMiB)
}
