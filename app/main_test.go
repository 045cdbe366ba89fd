package app_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
)

// waitersPerCPU is how many tests of this package run at once per CPU unless
// -test.parallel says otherwise. Most of them spend their time waiting on
// other processes (herald binaries, nats-servers, a cron instant), not
// computing, so Go's default of one per CPU leaves the machine idle.
const waitersPerCPU = 4

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", fmt.Sprint(waitersPerCPU*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
