package export

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// TestExportsStartedAfterRunEndedLeaveNoGoroutine: once Run has ended, a
// request that starts an export returns, however many do, and leaves no
// goroutine behind (the bubble fails on one left blocked); the store keeps
// the exports for the next start.
func TestExportsStartedAfterRunEndedLeaveNoGoroutine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		s := b.service()
		ctx, cancel := context.WithCancel(t.Context())
		ran := make(chan error, 1)
		go func() { ran <- s.Run(ctx) }()
		synctest.Wait()
		cancel()
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
		e, err := s.Start(t.Context(), "p", "sales", "CSV")
		must(t, err)
		// More than any queue holds: each is a request that must not wait.
		for i := range 2 * maxQueued {
			s.enqueue(fmt.Sprintf("x%d", i))
		}
		synctest.Wait()
		got, err := s.Get(t.Context(), e.ID)
		must(t, err)
		if got.State != store.ExportRunning {
			t.Fatalf("export %+v, want it left running for the next start", got)
		}
	})
}

// gated is a Source whose results wait for open to close.
type gated struct {
	grids
	open chan struct{}
}

func (g gated) ResultGrid(ctx context.Context, pid, id string) (*grid.Grid, error) {
	<-g.open
	return g.grids.ResultGrid(ctx, pid, id)
}

// TestAFullQueueLeavesExportsToTheStore: exports started while the queue is
// full wait in the store, and the workers render them once the queue has
// drained, without a restart.
func TestAFullQueueLeavesExportsToTheStore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		src := gated{open: make(chan struct{})}
		s := New(b.st, src, Options{Config: Config{Workers: 1}, Dir: t.TempDir(), Clock: clock.NowFrom(func() time.Time { return b.now })},
			slog.New(slog.DiscardHandler))
		s.maxQueued = 2
		ctx, cancel := context.WithCancel(t.Context())
		ran := make(chan error, 1)
		go func() { ran <- s.Run(ctx) }()
		synctest.Wait()
		var ids []string
		for range 6 { // one rendering, two queued, three in the store only
			e, err := s.Start(t.Context(), "p", "sales", "CSV")
			must(t, err)
			ids = append(ids, e.ID)
			synctest.Wait()
		}
		close(src.open)
		synctest.Wait()
		for _, id := range ids {
			if got, err := s.Get(t.Context(), id); err != nil || got.State != store.ExportDone {
				t.Errorf("export %s: %+v, %v; want it done", id, got, err)
			}
		}
		cancel()
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
	})
}

// warnings is a log handler that counts warnings and calls second at the second.
type warnings struct {
	n      atomic.Int32
	second func()
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *warnings) WithGroup(string) slog.Handler            { return w }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && w.n.Add(1) == 2 {
		w.second()
	}
	return nil
}

// TestAFailedReadOfTheWaitingExportsWaitsForTheNextRequest: when the store
// cannot tell the exports left out of a full queue, a worker says so once
// and waits for the next request, rather than asking the store again at once.
func TestAFailedReadOfTheWaitingExportsWaitsForTheNextRequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		warns := &warnings{second: cancel} // a second read ends the run: a loop would never block
		s := New(b.st, grids{}, Options{Dir: t.TempDir(), Clock: clock.NowFrom(func() time.Time { return b.now })}, slog.New(warns))
		s.maxQueued = 0 // every export waits in the store only
		ran := make(chan error, 1)
		go func() { ran <- s.Run(ctx) }()
		synctest.Wait()
		must(t, b.st.Close())
		s.enqueue("x")
		synctest.Wait()
		if n := warns.n.Load(); n != 1 {
			t.Errorf("%d warnings of a store that cannot be read, want 1: the worker is to wait for the next request", n)
		}
		cancel()
		<-ran
	})
}
