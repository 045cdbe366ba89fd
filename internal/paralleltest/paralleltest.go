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
	if race {
		return
	}
	atLeast(flag.CommandLine, n)
}

func atLeast(fs *flag.FlagSet, n int) {
	if _, ok := given(fs); !ok {
		if err := fs.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
}

// given is the -test.parallel the command line set, if it set one.
func given(fs *flag.FlagSet) (n int, ok bool) {
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			n, _ = strconv.Atoi(f.Value.String())
		}
	})
	return n, n > 0
}
