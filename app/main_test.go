package app_test

import (
	"os"
	"testing"

	"github.com/heraldhq/herald/internal/paralleltest"
	"github.com/heraldhq/herald/internal/scratch"
)

// minParallel is how many tests run at once unless -test.parallel says: eight,
// or GOMAXPROCS if more. Most of them spend their time waiting on other
// processes (herald binaries, nats-servers, a cron instant), not computing,
// so Go's default of one per CPU leaves a small machine idle.
const minParallel = 8

// gate runs the parallel tests minParallel at a time, the drills that take
// longest first: started last, as Go's own order often had them, they made
// the package wait their length after every other test had ended. A test
// calls gate.Parallel(t), gate.Long(t), gate.Quiet(t) or gate.Alone(t) in
// place of t.Parallel(); the tests of package app itself, which start no
// service, keep t.Parallel().
var gate *paralleltest.Gate

// scratchRoom is the room the package's temporary files want on a memory
// file system: at most about 400 MB at once, measured.
const scratchRoom = 2 << 30

func TestMain(m *testing.M) {
	gate = paralleltest.NewGate(minParallel)
	remove := scratch.InMemory(scratchRoom)
	code := m.Run()
	remove()
	os.Exit(code)
}
