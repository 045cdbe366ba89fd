package paralleltest

import (
	"flag"
	"strconv"
	"sync"
	"testing"
)

// unbounded is the -test.parallel a Gate sets: more than a package has tests,
// so that Go lets every paused test through and the gate alone decides.
const unbounded = 10000

// Gate runs a package's parallel tests n at a time, the long ones first. Go
// resumes paused tests in an order no test file sets, so that a package whose
// few long tests (drills that wait on cron instants and leases) come last
// takes their length again after all the others. Through a gate they start
// as soon as a slot is free.
//
// A TestMain makes the gate; each parallel test calls its Parallel or Long in
// place of t.Parallel. A test with parallel subtests calls t.Parallel itself,
// and each subtest calls the gate: a parent holding a slot while its subtests
// wait for one could leave none.
type Gate struct {
	mu   sync.Mutex
	free int
	wait [2][]chan struct{} // by class; each in the order they came
}

// NewGate returns a gate of n slots, or GOMAXPROCS if more, unless the
// command line set -test.parallel (then that many) or the race detector runs
// (then GOMAXPROCS, for the reason AtLeast gives). Unless the command line
// set it, or the binary fuzzes (where it is the count of fuzzing workers), it
// raises -test.parallel past any count of tests.
func NewGate(n int) *Gate {
	flag.Parse()
	return newGate(flag.CommandLine, n, race)
}

func newGate(fs *flag.FlagSet, n int, race bool) *Gate {
	slots, keep := limit(fs, n, race)
	if !keep {
		if err := fs.Set("test.parallel", strconv.Itoa(unbounded)); err != nil {
			panic(err)
		}
	}
	return &Gate{free: slots}
}

// The classes of tests a gate serves, in the order it serves them.
const (
	long = iota
	other
)

// Parallel marks t parallel and returns once it has a slot, which it gives
// back when t ends.
func (g *Gate) Parallel(t *testing.T) {
	t.Helper()
	g.enter(t, other)
}

// Long is Parallel for a test that takes long: it gets the next free slot
// before any other test waiting.
func (g *Gate) Long(t *testing.T) {
	t.Helper()
	g.enter(t, long)
}

func (g *Gate) enter(t *testing.T, class int) {
	t.Parallel()
	g.acquire(class)
	t.Cleanup(g.release)
}

func (g *Gate) acquire(class int) {
	g.mu.Lock()
	if g.free > 0 {
		g.free--
		g.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	g.wait[class] = append(g.wait[class], ch)
	g.mu.Unlock()
	<-ch
}

// release hands the slot to the first long test waiting, else to the first
// other test waiting, else keeps it free.
func (g *Gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range g.wait {
		if len(q) > 0 {
			g.wait[i] = q[1:]
			close(q[0])
			return
		}
	}
	g.free++
}
