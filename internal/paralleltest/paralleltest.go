package paralleltest

import (
	"flag"
	"runtime"
	"strconv"
)

// AtLeast lets n tests, or GOMAXPROCS if more, run at once, unless the
// command line set -test.parallel. A TestMain calls it before m.Run.
func AtLeast(n int) {
	flag.Parse()
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
