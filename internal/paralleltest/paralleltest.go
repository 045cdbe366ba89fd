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
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := fs.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
}
