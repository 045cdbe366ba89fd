package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// recorder collects dispatched fires with the (fake) time they were
// dispatched at, and how many fires each dispatch handed over.
type recorder struct {
	mu      sync.Mutex
	fires   []Fire
	at      []time.Time
	batches []int
}

func (r *recorder) dispatch(fs []Fire) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for _, f := range fs {
		r.fires = append(r.fires, f)
		r.at = append(r.at, now)
	}
	r.batches = append(r.batches, len(fs))
}

func (r *recorder) snapshot() ([]Fire, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Fire(nil), r.fires...), append([]time.Time(nil), r.at...)
}

func sub(id, cronExpr, tz string) store.Subscription {
	return store.Subscription{ID: id, Enabled: true, Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: cronExpr, Timezone: tz}}}}
}

// runScheduler starts s in the bubble and returns a stop function that waits for it.
func runScheduler(s *Scheduler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func TestSchedulerFiresOnTimeWithoutLateness(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		s := NewScheduler(rec.dispatch, nil)
		start := time.Now()
		s.Set(sub("a", "0 0/5 * * * *", "UTC"), start)
		s.Set(sub("b", "30 */2 * * * *", "UTC"), start)
		stop := runScheduler(s)
		time.Sleep(11 * time.Minute)
		synctest.Wait()
		stop()
		fires, at := rec.snapshot()
		want := []struct {
			id  string
			off time.Duration
		}{
			{"b", 30 * time.Second}, {"b", 2*time.Minute + 30*time.Second}, {"b", 4*time.Minute + 30*time.Second}, {"a", 5 * time.Minute},
			{"b", 6*time.Minute + 30*time.Second}, {"b", 8*time.Minute + 30*time.Second}, {"a", 10 * time.Minute},
			{"b", 10*time.Minute + 30*time.Second},
		}
		if len(fires) != len(want) {
			t.Fatalf("fires = %v, want %d", fires, len(want))
		}
		for i, w := range want {
			if fires[i].SubscriptionID != w.id || !fires[i].At.Equal(start.Add(w.off)) {
				t.Errorf("fire %d = %s at %s, want %s at +%s", i, fires[i].SubscriptionID, fires[i].At, w.id, w.off)
			}
			if late := at[i].Sub(fires[i].At); late != 0 {
				t.Errorf("fire %d dispatched %s late", i, late)
			}
		}
	})
}

func TestSchedulerAppliesChangesAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		s := NewScheduler(rec.dispatch, nil)
		stop := runScheduler(s)
		defer stop()
		start := time.Now()
		s.Set(sub("a", "0 0 * * * *", "UTC"), start) // hourly
		time.Sleep(30 * time.Minute)
		s.Set(sub("a", "0 */10 * * * *", "UTC"), time.Now()) // now every 10 minutes
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if fires, _ := rec.snapshot(); len(fires) != 1 || !fires[0].At.Equal(start.Add(40*time.Minute)) {
			t.Fatalf("after update fires = %v", fires)
		}
		paused := sub("a", "0 */10 * * * *", "UTC")
		paused.Enabled = false
		s.Set(paused, time.Now())
		time.Sleep(time.Hour)
		synctest.Wait()
		if fires, _ := rec.snapshot(); len(fires) != 1 {
			t.Fatalf("a paused subscription fired: %v", fires)
		}
		s.Set(sub("b", "0 */10 * * * *", "UTC"), time.Now())
		s.Remove("b")
		time.Sleep(time.Hour)
		synctest.Wait()
		if fires, _ := rec.snapshot(); len(fires) != 1 || s.Len() != 0 {
			t.Fatalf("a removed subscription fired: %v (len %d)", fires, s.Len())
		}
	})
}

// TestSchedulerDaylightSaving checks the DST policy end to end through the
// scheduler: a fire time in the spring-forward gap fires once just after it,
// and a repeated fall-back hour fires once.
func TestSchedulerDaylightSaving(t *testing.T) {
	t.Parallel()
	prague, _ := time.LoadLocation("Europe/Prague")
	newYork, _ := time.LoadLocation("America/New_York")
	cases := []struct {
		name  string
		cron  string
		loc   *time.Location
		from  time.Time
		until time.Time
		want  []time.Time
	}{
		{"Prague spring forward", "0 30 2 * * *", prague,
			time.Date(2026, 3, 28, 12, 0, 0, 0, prague), time.Date(2026, 3, 30, 12, 0, 0, 0, prague),
			[]time.Time{time.Date(2026, 3, 29, 3, 0, 0, 0, prague), time.Date(2026, 3, 30, 2, 30, 0, 0, prague)}},
		{"Prague fall back", "0 30 2 * * *", prague,
			time.Date(2026, 10, 24, 12, 0, 0, 0, prague), time.Date(2026, 10, 26, 12, 0, 0, 0, prague),
			[]time.Time{time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), time.Date(2026, 10, 26, 2, 30, 0, 0, prague)}},
		{"New York spring forward", "0 15 2 * * *", newYork,
			time.Date(2026, 3, 7, 12, 0, 0, 0, newYork), time.Date(2026, 3, 9, 12, 0, 0, 0, newYork),
			[]time.Time{time.Date(2026, 3, 8, 3, 0, 0, 0, newYork), time.Date(2026, 3, 9, 2, 15, 0, 0, newYork)}},
		{"New York fall back", "0 30 1 * * *", newYork,
			time.Date(2026, 10, 31, 12, 0, 0, 0, newYork), time.Date(2026, 11, 2, 12, 0, 0, 0, newYork),
			[]time.Time{time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), time.Date(2026, 11, 2, 1, 30, 0, 0, newYork)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var rec recorder
				s := NewScheduler(rec.dispatch, nil)
				time.Sleep(time.Until(tc.from))
				s.Set(sub("a", tc.cron, tc.loc.String()), time.Now())
				stop := runScheduler(s)
				time.Sleep(time.Until(tc.until))
				synctest.Wait()
				stop()
				fires, _ := rec.snapshot()
				if len(fires) != len(tc.want) {
					t.Fatalf("fires = %v, want %v", fires, tc.want)
				}
				for i, w := range tc.want {
					if !fires[i].At.Equal(w) {
						t.Errorf("fire %d at %s, want %s", i, fires[i].At.In(tc.loc), w.In(tc.loc))
					}
				}
			})
		})
	}
}

func TestSchedulerManyAtOneInstant(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		s := NewScheduler(rec.dispatch, nil)
		start := time.Now()
		for i := range 1000 {
			s.Set(sub(string(rune('a'+i%26))+string(rune(i)), "0 0 * * * *", "UTC"), start)
		}
		stop := runScheduler(s)
		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		stop()
		fires, at := rec.snapshot()
		if len(fires) != 1000 {
			t.Fatalf("%d fires, want 1000", len(fires))
		}
		for i := range fires {
			if !fires[i].At.Equal(start.Add(time.Hour)) || !at[i].Equal(fires[i].At) {
				t.Fatalf("fire %d at %s dispatched %s", i, fires[i].At, at[i])
			}
		}
	})
}

// TestSchedulerMakesRoomForABucketAFewTimes: subscriptions made one at a
// time at one instant, as through the API, while the scheduler runs. It makes
// room for the instant's fires ahead of it, growing it a few times: making
// room for the whole bucket at every subscription would allocate gigabytes
// for these 20,000. The instant's fires all come, in one step. Not parallel:
// it reads the allocations of the whole test binary.
func TestSchedulerMakesRoomForABucketAFewTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		s := NewScheduler(rec.dispatch, nil)
		stop := runScheduler(s)
		start := time.Now()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const n = 20_000
		for i := range n {
			s.Set(sub(fmt.Sprint(i), "0 0 * * * *", "UTC"), start)
			synctest.Wait() // the scheduler has looked at the change
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("making %d subscriptions allocated %d MiB", n, grew>>20)
		}
		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		stop()
		fires, _ := rec.snapshot()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(fires) != n || len(rec.batches) != 1 {
			t.Errorf("%d fires in %d steps, want %d in 1", len(fires), len(rec.batches), n)
		}
	})
}

// TestSchedulerReportsTriggersItCannotUse: a trigger that does not parse is
// left out with an error naming it, and the subscription's other triggers stay.
func TestSchedulerReportsTriggersItCannotUse(t *testing.T) {
	t.Parallel()
	s := NewScheduler(func([]Fire) {}, nil)
	sub := store.Subscription{ID: "s1", Enabled: true, Def: store.SubscriptionDef{Triggers: []store.Trigger{
		{Cron: "0 0 8 * * *", Timezone: "UTC"}, {Cron: "every morning", Timezone: "UTC"}}}}
	err := s.Set(sub, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if err == nil || !strings.Contains(err.Error(), `trigger 1 ("every morning")`) {
		t.Fatalf("Set = %v, want an error naming trigger 1", err)
	}
	if s.Len() != 1 {
		t.Fatalf("%d triggers scheduled, want the one that parses", s.Len())
	}
}

// TestSchedulerHandsOverAnInstantInOneStep: the 10,000 triggers of a burst
// and an every-second trigger due at the same instant are handed over in one
// dispatch, so the every-second one does not wait behind the burst; the
// seconds after hand over the every-second trigger alone.
func TestSchedulerHandsOverAnInstantInOneStep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		s := NewScheduler(rec.dispatch, nil)
		start := time.Now() // midnight: the next hour is an hour away
		for i := range 10_000 {
			s.Set(sub(fmt.Sprintf("burst%05d", i), "0 0 * * * *", "UTC"), start)
		}
		s.Set(sub("tick", "* * * * * *", "UTC"), start.Add(time.Hour-3*time.Second))
		stop := runScheduler(s)
		time.Sleep(time.Hour + 2*time.Second)
		synctest.Wait()
		stop()
		fires, at := rec.snapshot()
		rec.mu.Lock()
		batches := rec.batches
		rec.mu.Unlock()
		if want := []int{1, 1, 10_001, 1, 1}; !slices.Equal(batches, want) {
			t.Fatalf("dispatched batches of %v fires, want %v", batches, want)
		}
		for i, f := range fires {
			if !at[i].Equal(f.At) {
				t.Fatalf("fire %s of %s handed over at %s", f.SubscriptionID, f.At, at[i])
			}
		}
	})
}

// jumpClock stands still but for one jump forward, taken as the scheduler
// sets up a wait: a clock advanced by another goroutine (or a process paused)
// can move between the scheduler's reading of the time and its wait. Its
// waits never end; the scheduler uses no other of its waits.
type jumpClock struct {
	clock.Clock
	t    atomic.Int64 // Unix nanoseconds
	jump atomic.Int64 // nanoseconds, taken once
}

func (c *jumpClock) Now() time.Time { return time.Unix(0, c.t.Load()).UTC() }

func (c *jumpClock) After(time.Duration) <-chan time.Time {
	c.t.Add(c.jump.Swap(0))
	return nil
}

// TestSchedulerFiresWhenTheClockMovesDuringItsWait: the clock reaches the next
// instant between the scheduler's reading of it and its wait; the scheduler
// fires the instant instead of waiting the whole wait again.
func TestSchedulerFiresWhenTheClockMovesDuringItsWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		clock := &jumpClock{}
		clock.t.Store(start.UnixNano())
		var rec recorder
		s := NewScheduler(rec.dispatch, clock)
		stop := runScheduler(s)
		defer stop()
		synctest.Wait() // waiting, with nothing to fire
		clock.jump.Store(int64(5 * time.Minute))
		s.Set(sub("a", "0 */5 * * * *", "UTC"), start)
		synctest.Wait()
		if fires, _ := rec.snapshot(); len(fires) != 1 || !fires[0].At.Equal(start.Add(5*time.Minute)) {
			t.Fatalf("fires = %v, want the one at 09:05", fires)
		}
	})
}
