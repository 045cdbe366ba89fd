package paralleltest

import (
	"flag"
	"runtime"
	"strconv"
)

// AtLeast lets n tests, or GOMAXPROCS if more, run at once, unless the
// command line set -test.parallel or the race detector runs: its checks
// make every test compute many times what it would, so that more tests at
// once only share the CPUs and stretch the waits they hold to a time. A
// TestMain calls it before m.Run.
func AtLeast(n int) {
	flag.Parse()
	atLeast(flag.CommandLine, n, race)
}

func atLeast(fs *flag.FlagSet, n int, race bool) {
	if slots, given := limit(fs, n, race); !given && !fuzzing(fs) {
		if err := fs.Set("test.parallel", strconv.Itoa(slots)); err != nil {
			panic(err)
		}
	}
}

// limit is how many tests run at once: the command line's -test.parallel
// when it set one (given), else one per CPU under the race detector (Go's
// default), else n or GOMAXPROCS if more.
func limit(fs *flag.FlagSet, n int, race bool) (slots int, given bool) {
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			slots, _ = strconv.Atoi(f.Value.String())
		}
	})
	switch {
	case slots > 0:
		return slots, true
	case race:
		return runtime.GOMAXPROCS(0), false
	}
	return max(n, runtime.GOMAXPROCS(0)), false
}

// fuzzing reports whether the binary fuzzes (-test.fuzz) or is a fuzzing
// worker: -test.parallel is then how many workers fuzz, one per CPU unless
// the command line says, and is left alone.
func fuzzing(fs *flag.FlagSet) bool {
	f := fs.Lookup("test.fuzz")
	w := fs.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() != "" || w != nil && w.Value.String() == "true"
}
