package replica

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAKilledReplicatorLeavesNoGoroutine: once Kill has returned, nothing of
// the replicator's goroutines remains, the one telling it the lease's
// validity neither. Not parallel: it reads the goroutines of the whole test
// binary.
func TestAKilledReplicatorLeavesNoGoroutine(t *testing.T) {
	// A child that says it is ready and reads its input until killed.
	cmd := exec.Command("/bin/sh", "-c", `echo '{"ready":true}'; exec cat >/dev/null`)
	ctx, cancel := context.WithTimeout(context.Background(), waitWithin)
	defer cancel()
	r, err := StartReplicator(ctx, cmd, func() time.Time { return time.Now().Add(time.Minute) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Kill()
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "replica.(*Replicator).") {
		t.Fatalf("a goroutine of the replicator outlived Kill:\n%s", stacks)
	}
}
