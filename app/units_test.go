package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a log a process writes from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// goroutines returns the stacks of every goroutine of the test binary.
func goroutines() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestRunStopsEveryUnitWhenServingFails: a process whose API listener fails
// at once stops with that error, and Run returns only once every unit has
// stopped: no prune loop, engine, exporter or relay goroutine is left,
// although the context Run was given never ends. Not parallel: it reads the
// goroutines of the whole test binary.
func TestRunStopsEveryUnitWhenServingFails(t *testing.T) {
	// Not parallel: it counts the goroutines of the whole process.
	cfg := DefaultConfig()
	cfg.Data = t.TempDir()
	cfg.Listen, cfg.Metrics.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Auth.PasswordCost = 4
	var log lockedBuffer
	ctx := context.Background() // never ends: only the failure stops the process
	a, err := New(ctx, cfg, Options{Logger: slog.New(slog.NewTextHandler(&log, nil)), Stdout: io.Discard,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	a.ln.Close()
	err = a.Run(ctx)
	if err == nil || strings.Count(err.Error(), "api server") != 1 {
		t.Errorf("Run: %v, want the API server's failure, once", err)
	}
	for _, unit := range []string{"operator listener", "backup socket", "api server", "executor", "exporter", "relay",
		"worker", "tasks", "maintenance", "health", "token pruning", "engine"} {
		if !strings.Contains(log.String(), "msg=stopped part=\""+unit+"\"") && !strings.Contains(log.String(), "msg=stopped part="+unit+" ") {
			t.Errorf("Run returned before the unit %q had stopped", unit)
		}
	}
	stacks := goroutines()
	for _, fn := range []string{"app.(*App).pruneLoop(", "internal/startstop.", "engine.(*Engine).", "export.(*Service).",
		"worker.(*Relay)."} {
		if strings.Contains(stacks, fn) {
			t.Errorf("a goroutine in %s outlived Run:\n%s", fn, stacks)
		}
	}
}
