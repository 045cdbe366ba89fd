package app_test

import (
	"os"
	"testing"

	"github.com/heraldhq/herald/internal/paralleltest"
)

// minParallel is how many tests run at once unless -test.parallel says: eight,
// or GOMAXPROCS if more. Most of them spend their time waiting on other
// processes (herald binaries, nats-servers, a cron instant), not computing,
// so Go's default of one per CPU leaves a small machine idle.
const minParallel = 8

func TestMain(m *testing.M) {
	paralleltest.AtLeast(minParallel)
	os.Exit(m.Run())
}
