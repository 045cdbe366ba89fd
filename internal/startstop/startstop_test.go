package startstop

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder notes the order in which units stop.
type recorder struct {
	mu    sync.Mutex
	order []string
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.order = append(r.order, s)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// waiting is a unit that works until its context ends, then takes d to wind
// down, and notes when it has.
func waiting(name string, d time.Duration, rec *recorder) Unit {
	return Unit{Name: name, Run: func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(d) // winding down; the bubble's clock makes it instant
		rec.note(name)
		return nil
	}}
}

func TestStopEndsUnitsLastFirstWaitingForEach(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		var log bytes.Buffer
		g := New(slog.New(slog.NewTextHandler(&log, nil)))
		// Each unit takes longer to wind down than the one started before
		// it: were Stop to end them all at once, the first would be noted
		// first.
		if err := g.Start(t.Context(), waiting("a", time.Millisecond, &rec), waiting("b", time.Second, &rec)); err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context(), waiting("c", time.Minute, &rec)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := rec.got(); len(got) != 0 {
			t.Fatalf("stopped before Stop: %v", got)
		}
		if err := g.Stop(); err != nil {
			t.Fatal(err)
		}
		// Stop returned: every unit has returned.
		if got, want := rec.got(), []string{"c", "b", "a"}; !slices.Equal(got, want) {
			t.Fatalf("stop order %v, want %v", got, want)
		}
		for _, want := range []string{"part=c took=1m0s", "part=b took=1s", "part=a took=1ms"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, log.String())
			}
		}
	})
}

func TestStopWaitsForAUnitToReturn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		g := New(nil)
		_ = g.Start(t.Context(), waiting("slow", time.Hour, &rec))
		stopped := make(chan error, 1)
		go func() { stopped <- g.Stop() }()
		time.Sleep(time.Hour - time.Nanosecond)
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("Stop returned before the unit did")
		default:
		}
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if got := rec.got(); !slices.Equal(got, []string{"slow"}) {
			t.Fatalf("units that returned: %v", got)
		}
	})
}

func TestAFailingUnitIsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		g := New(nil)
		boom := errors.New("boom")
		_ = g.Start(t.Context(), waiting("quiet", 0, &rec), Unit{Name: "broken", Run: func(context.Context) error {
			return boom
		}})
		select {
		case <-g.Failed():
		case <-time.After(time.Hour):
			t.Fatal("Failed was not closed")
		}
		err := g.Stop()
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "broken: boom") {
			t.Fatalf("Stop: %v, want broken: boom", err)
		}
		if got := rec.got(); !slices.Equal(got, []string{"quiet"}) {
			t.Fatalf("the other units were not stopped: %v", got)
		}
	})
}

func TestAUnitStoppedWhileStartingIsNoFailure(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := New(nil)
		_ = g.Start(t.Context(), Unit{Name: "starting", Run: func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err() // as a start that was waiting on a query says
		}})
		if err := g.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		select {
		case <-g.Failed():
			t.Fatal("Failed was closed")
		default:
		}
	})
}

func TestACanceledErrorBeforeStopIsAFailure(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := New(nil)
		_ = g.Start(t.Context(), Unit{Name: "odd", Run: func(context.Context) error { return context.Canceled }})
		<-g.Failed()
		if err := g.Stop(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Stop: %v, want the unit's context.Canceled", err)
		}
	})
}

func TestStopIsIdempotent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		g := New(nil)
		boom := errors.New("boom")
		_ = g.Start(t.Context(), waiting("a", 0, &rec), Unit{Name: "b", Run: func(ctx context.Context) error {
			<-ctx.Done()
			rec.note("b")
			return boom
		}})
		first := g.Stop()
		second := g.Stop()
		if !errors.Is(first, boom) || first != second {
			t.Fatalf("Stop gave %v, then %v", first, second)
		}
		if got := rec.got(); !slices.Equal(got, []string{"b", "a"}) {
			t.Fatalf("units stopped %v, want each once", got)
		}
		if err := g.Start(t.Context(), waiting("late", 0, &rec)); !errors.Is(err, ErrStopped) {
			t.Fatalf("Start after Stop: %v, want ErrStopped", err)
		}
	})
}

func TestUnitsOutliveTheStartContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		g := New(nil)
		ctx, cancel := context.WithCancel(t.Context())
		_ = g.Start(ctx, waiting("a", 0, &rec))
		cancel()
		synctest.Wait()
		if got := rec.got(); len(got) != 0 {
			t.Fatalf("the start context's end stopped %v", got)
		}
		_ = g.Stop()
	})
}
