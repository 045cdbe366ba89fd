package paralleltest

import (
	"flag"
	"runtime"
	"slices"
	"testing"
)

// commandLine is a test binary's command line with args: its flags, and its
// -test.parallel, Go's default until args or the code under test set it.
func commandLine(t *testing.T, args []string) (*flag.FlagSet, *int) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	p := fs.Int("test.parallel", runtime.GOMAXPROCS(0), "")
	fs.String("test.fuzz", "", "")
	fs.Bool("test.fuzzworker", false, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs, p
}

func TestAtLeast(t *testing.T) {
	t.Parallel()
	many := runtime.GOMAXPROCS(0) + 7
	for _, tc := range []struct {
		name string
		args []string
		n    int
		want int
	}{
		{"raised when not given", nil, many, many},
		{"never below GOMAXPROCS", nil, 1, runtime.GOMAXPROCS(0)},
		{"kept when given", []string{"-test.parallel=3"}, many, 3},
		{"left to Go when fuzzing", []string{"-test.fuzz=FuzzX"}, many, runtime.GOMAXPROCS(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, p := commandLine(t, tc.args)
			atLeast(fs, tc.n, false)
			if *p != tc.want {
				t.Errorf("-test.parallel %d, want %d", *p, tc.want)
			}
		})
	}
}

func TestNewGate(t *testing.T) {
	t.Parallel()
	many := runtime.GOMAXPROCS(0) + 7
	for _, tc := range []struct {
		name     string
		args     []string
		n        int
		race     bool
		slots    int
		parallel int
	}{
		{"slots raised, Go's limit lifted", nil, many, false, many, unbounded},
		{"never below GOMAXPROCS", nil, 1, false, runtime.GOMAXPROCS(0), unbounded},
		{"as given", []string{"-test.parallel=3"}, many, false, 3, 3},
		{"one per CPU under the race detector", nil, many, true, runtime.GOMAXPROCS(0), unbounded},
		{"fuzzing workers left to Go", []string{"-test.fuzz=FuzzX"}, many, false, many, runtime.GOMAXPROCS(0)},
		{"a fuzzing worker left alone", []string{"-test.fuzzworker"}, many, false, many, runtime.GOMAXPROCS(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, p := commandLine(t, tc.args)
			g := newGate(fs, tc.n, tc.race)
			if g.free != tc.slots || *p != tc.parallel {
				t.Errorf("%d slots and -test.parallel %d, want %d and %d", g.free, *p, tc.slots, tc.parallel)
			}
		})
	}
}

// TestGateServesLongTestsFirst: with its one slot taken, a gate gives it
// back to the long test waiting before the others that came earlier, then
// to those in the order they came.
func TestGateServesLongTestsFirst(t *testing.T) {
	t.Parallel()
	g := &Gate{free: 1}
	g.acquire(other)
	got := make(chan string, 3)
	wait := func(name string, class int) {
		queued := g.waiting()
		go func() {
			g.acquire(class)
			got <- name
		}()
		for g.waiting() == queued {
			runtime.Gosched()
		}
	}
	wait("short 1", other)
	wait("short 2", other)
	wait("long", long)
	var order []string
	for range 3 {
		g.release()
		order = append(order, <-got)
	}
	if want := []string{"long", "short 1", "short 2"}; !slices.Equal(order, want) {
		t.Errorf("slots went to %v, want %v", order, want)
	}
	g.release()
	if g.free != 1 {
		t.Errorf("%d slots free after every test ended, want 1", g.free)
	}
}

// waiting is how many tests wait for a slot.
func (g *Gate) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.wait[long]) + len(g.wait[other])
}
