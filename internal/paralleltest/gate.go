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
// A test that holds a time which other tests' computing would stretch runs
// through Alone, and only tests that mostly wait (Quiet) run beside it; the
// others wait until it ends. Before, such a test ran without t.Parallel, and
// the package's quiet tests waited out its length too.
//
// A TestMain makes the gate; each parallel test calls its Parallel, Long,
// Quiet or Alone in place of t.Parallel. A test with parallel subtests calls
// t.Parallel itself, and each subtest calls the gate: a parent holding a slot
// while its subtests wait for one could leave none.
type Gate struct {
	mu      sync.Mutex
	free    int
	alone   int                      // Alone tests not yet ended, started or not
	holding [classes]int             // slots held, by class
	wait    [classes][]chan struct{} // by class; each in the order they came
}

// NewGate returns a gate of n slots, or GOMAXPROCS if more, unless the
// command line set -test.parallel (then that many) or the race detector runs
// (then GOMAXPROCS, for the reason AtLeast gives). Unless the binary fuzzes
// (where -test.parallel is the count of fuzzing workers), it raises
// -test.parallel past any count of tests, the command line's too: the gate
// alone decides. Were Go to hold back some paused tests, the tests it let
// through could all be waiting for one of those, an Alone test.
func NewGate(n int) *Gate {
	flag.Parse()
	return newGate(flag.CommandLine, n, race)
}

func newGate(fs *flag.FlagSet, n int, race bool) *Gate {
	slots, _ := limit(fs, n, race)
	if !fuzzing(fs) {
		if err := fs.Set("test.parallel", strconv.Itoa(unbounded)); err != nil {
			panic(err)
		}
	}
	return &Gate{free: slots}
}

// The classes of tests a gate serves, in the order it serves them.
const (
	alone = iota
	quiet
	long
	other
	classes
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

// Quiet is Long for a test that spends its time waiting on leases, timers
// and cron instants, computing little: it may run beside an Alone test.
func (g *Gate) Quiet(t *testing.T) {
	t.Helper()
	g.enter(t, quiet)
}

// Alone is Parallel for a test that holds a time which other tests'
// computing would stretch. It starts before any other test, beside Quiet
// tests only, and no test but a Quiet one starts until it ends; a
// package's Alone tests run one at a time. It is counted before t pauses,
// when Go runs the tests one by one, so that none of the others can take
// a slot first once Go resumes them all.
func (g *Gate) Alone(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	g.alone++
	g.mu.Unlock()
	g.enter(t, alone)
}

func (g *Gate) enter(t *testing.T, class int) {
	t.Parallel()
	t.Cleanup(g.acquire(class))
}

// acquire waits for a slot for a test of class, and returns what gives it
// back.
func (g *Gate) acquire(class int) (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.wait[class] = append(g.wait[class], ch)
	g.dispatch()
	g.mu.Unlock()
	<-ch
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.free++
		g.holding[class]--
		if class == alone {
			g.alone--
		}
		g.dispatch()
	}
}

// dispatch hands the free slots to the tests waiting, class by class in
// the order they are served, each class in the order its tests came.
func (g *Gate) dispatch() {
	for c := range g.wait {
		for g.free > 0 && len(g.wait[c]) > 0 && g.admits(c) {
			close(g.wait[c][0])
			g.wait[c] = g.wait[c][1:]
			g.free--
			g.holding[c]++
		}
	}
}

// admits says whether a test of class may start now: a Quiet one always, an
// Alone one when no test but a Quiet one holds a slot, the others when no
// Alone test is still to end.
func (g *Gate) admits(class int) bool {
	switch class {
	case quiet:
		return true
	case alone:
		return g.holding[alone]+g.holding[long]+g.holding[other] == 0
	default:
		return g.alone == 0
	}
}
