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
		{"as given, Go's limit lifted", []string{"-test.parallel=3"}, many, false, 3, unbounded},
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
	release := g.acquire(other)
	got := make(chan string, 3)
	releases := make(chan func(), 3)
	wait := func(name string, class int) {
		queued := g.waiting()
		go func() {
			r := g.acquire(class)
			got <- name
			releases <- r
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
		release()
		order = append(order, <-got)
		release = <-releases
	}
	if want := []string{"long", "short 1", "short 2"}; !slices.Equal(order, want) {
		t.Errorf("slots went to %v, want %v", order, want)
	}
	release()
	if g.free != 1 {
		t.Errorf("%d slots free after every test ended, want 1", g.free)
	}
}

// TestGateRunsAloneTestsBesideQuietOnesOnly: of tests that all came while
// two Alone tests were counted, the first Alone one and the Quiet ones start
// at once; the other tests wait for both Alone ones, which run one at a
// time, however many slots are free.
func TestGateRunsAloneTestsBesideQuietOnesOnly(t *testing.T) {
	t.Parallel()
	g := &Gate{free: 8, alone: 2}
	started := make(chan string, 6)
	releases := map[string]chan func(){}
	for _, tc := range []struct {
		name  string
		class int
	}{{"other", other}, {"long", long}, {"alone 1", alone}, {"quiet 1", quiet}, {"quiet 2", quiet}, {"alone 2", alone}} {
		releases[tc.name] = make(chan func(), 1)
		came := g.came()
		go func() {
			r := g.acquire(tc.class)
			started <- tc.name
			releases[tc.name] <- r
		}()
		for g.came() == came {
			runtime.Gosched()
		}
		if tc.name == "alone 1" {
			if got := <-started; got != "alone 1" {
				t.Fatalf("%s started first, want alone 1", got)
			}
		}
	}
	first := []string{<-started, <-started}
	slices.Sort(first)
	if want := []string{"quiet 1", "quiet 2"}; !slices.Equal(first, want) {
		t.Fatalf("beside alone 1 started %v, want %v", first, want)
	}
	if n := g.waiting(); n != 3 {
		t.Fatalf("%d tests wait while alone 1 runs, want 3", n)
	}
	(<-releases["quiet 1"])()
	if n := g.waiting(); n != 3 {
		t.Fatalf("%d tests wait once quiet 1 ended, want 3", n)
	}
	(<-releases["alone 1"])()
	if got := <-started; got != "alone 2" {
		t.Fatalf("%s started after alone 1, want alone 2", got)
	}
	(<-releases["alone 2"])()
	rest := []string{<-started, <-started}
	slices.Sort(rest)
	if want := []string{"long", "other"}; !slices.Equal(rest, want) {
		t.Errorf("after the Alone tests started %v, want %v", rest, want)
	}
	for _, name := range []string{"quiet 2", "long", "other"} {
		(<-releases[name])()
	}
	if g.free != 8 || g.alone != 0 {
		t.Errorf("%d slots free and %d Alone tests counted after every test ended, want 8 and 0", g.free, g.alone)
	}
}

// waiting is how many tests wait for a slot.
func (g *Gate) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, q := range g.wait {
		n += len(q)
	}
	return n
}

// came is how many tests wait for a slot or hold one.
func (g *Gate) came() int {
	n := g.waiting()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, h := range g.holding {
		n += h
	}
	return n
}
