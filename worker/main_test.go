package worker

import (
	"testing"

	"github.com/heraldhq/herald/internal/paralleltest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	paralleltest.AtLeast(minParallel)
	goleak.VerifyTestMain(m,
		// Parked for good when ObjectStore.Put's reply subscription is
		// torn down before the watcher first runs (see Files.Put).
		goleak.IgnoreAnyFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

// minParallel is how many tests may run at once unless -test.parallel says:
// at least six, whatever the core count. The tests spend their time
// waiting, not computing: on the NATS servers' own timers (ack waits, pull
// expiries, a cluster's leader elections) and on real-time backoffs, so
// GOMAXPROCS at a time, the default, leaves a small machine idle.
const minParallel = 6
