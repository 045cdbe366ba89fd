package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/clock/clocktest"
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

// TestStartReplicatorSaysWhileItWaits: a replicator that is not ready (one
// restoring a large database, or waiting for NATS) leaves a warning in the
// log every notReadyEvery, naming its process and how long it has been
// waited for, and the wait ends with its context.
func TestStartReplicatorSaysWhileItWaits(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "exec cat >/dev/null") // never says it is ready
	var out syncBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	clk := clocktest.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := startReplicatorWith(ctx, cmd, nil, log, clk)
		done <- err
	}()
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.After(waitWithin)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for !ok() {
			select {
			case <-tick.C:
			case err := <-done:
				t.Fatalf("StartReplicator returned (%v) before %s", err, what)
			case <-deadline:
				t.Fatalf("no %s within %v; the log:\n%s", what, waitWithin, out.String())
			}
		}
	}
	waitUntil("ticker armed", func() bool { return clk.Waiting() == 1 })
	for i, waited := range []string{"30s", "1m0s"} {
		clk.Advance(notReadyEvery)
		waitUntil("warning "+waited, func() bool { return strings.Count(out.String(), "not ready yet") == i+1 })
		want := fmt.Sprintf("pid=%d waited=%s", cmd.Process.Pid, waited)
		if !strings.Contains(out.String(), want) {
			t.Errorf("warning %d does not say %q:\n%s", i+1, want, out.String())
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("StartReplicator returned %v once its context ended, want context.Canceled", err)
	}
}
