package clocktest

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// got returns what ch holds now, or the zero time.
func got(ch <-chan time.Time) time.Time {
	select {
	case at := <-ch:
		return at
	default:
		return time.Time{}
	}
}

func TestAdvanceFiresEachTimerDueWithItsInstant(t *testing.T) {
	t.Parallel()
	c := New(t0)
	late, early, never := c.NewTimer(2*time.Second), c.NewTimer(time.Second), c.NewTimer(time.Hour)
	after := c.After(1500 * time.Millisecond)
	c.Advance(3 * time.Second)
	for _, w := range []struct {
		ch <-chan time.Time
		d  time.Duration
	}{{early.C(), time.Second}, {after, 1500 * time.Millisecond}, {late.C(), 2 * time.Second}} {
		if at := got(w.ch); !at.Equal(t0.Add(w.d)) {
			t.Errorf("the timer of %v received %v, want its instant %v", w.d, at, t0.Add(w.d))
		}
	}
	if at := got(never.C()); !at.IsZero() {
		t.Errorf("a timer due in an hour fired at %v", at)
	}
	if n := c.Waiting(); n != 1 {
		t.Errorf("Waiting() = %d after three of four fired, want 1", n)
	}
	if !c.Now().Equal(t0.Add(3 * time.Second)) {
		t.Errorf("Now() = %v, want %v", c.Now(), t0.Add(3*time.Second))
	}
}

func TestAStoppedTimerDoesNotFire(t *testing.T) {
	t.Parallel()
	c := New(t0)
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Error("Stop of an armed timer = false")
	}
	if tm.Stop() {
		t.Error("a second Stop = true")
	}
	c.Advance(time.Minute)
	if at := got(tm.C()); !at.IsZero() {
		t.Errorf("a stopped timer fired at %v", at)
	}
	if n := c.Waiting(); n != 0 {
		t.Errorf("Waiting() = %d, want 0", n)
	}
}

func TestResetMovesATimersInstant(t *testing.T) {
	t.Parallel()
	c := New(t0)
	tm := c.NewTimer(time.Second)
	if !tm.Reset(5 * time.Second) {
		t.Error("Reset of an armed timer = false")
	}
	c.Advance(4 * time.Second)
	if at := got(tm.C()); !at.IsZero() {
		t.Fatalf("fired at %v, before its new instant", at)
	}
	c.Advance(time.Second)
	if at := got(tm.C()); !at.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("received %v, want %v", at, t0.Add(5*time.Second))
	}
	if tm.Reset(time.Second) {
		t.Error("Reset of a fired timer = true")
	}
	c.Advance(time.Second)
	if at := got(tm.C()); !at.Equal(t0.Add(6 * time.Second)) {
		t.Errorf("re-armed timer received %v, want %v", at, t0.Add(6*time.Second))
	}
	tm.Reset(0)
	if at := got(tm.C()); !at.Equal(t0.Add(6 * time.Second)) {
		t.Errorf("Reset(0) received %v, want the clock's time at once", at)
	}
}

func TestTickersRearmAndDropTicksNotRead(t *testing.T) {
	t.Parallel()
	c := New(t0)
	tk := c.NewTicker(time.Minute)
	for i := 1; i <= 3; i++ {
		c.Advance(time.Minute)
		if at := got(tk.C()); !at.Equal(t0.Add(time.Duration(i) * time.Minute)) {
			t.Fatalf("tick %d received %v, want %v", i, at, t0.Add(time.Duration(i)*time.Minute))
		}
	}
	c.Advance(150 * time.Second) // across two instants, with room for one tick
	if at := got(tk.C()); !at.Equal(t0.Add(4 * time.Minute)) {
		t.Errorf("received %v, want the first instant passed, %v", at, t0.Add(4*time.Minute))
	}
	if at := got(tk.C()); !at.IsZero() {
		t.Errorf("a second tick %v, want it dropped as time.Ticker does", at)
	}
	c.Advance(30 * time.Second) // 6 min: the next instant on the old grid
	if at := got(tk.C()); !at.Equal(t0.Add(6 * time.Minute)) {
		t.Errorf("received %v, want %v", at, t0.Add(6*time.Minute))
	}
	tk.Reset(time.Hour)
	c.Advance(59 * time.Minute)
	if at := got(tk.C()); !at.IsZero() {
		t.Errorf("ticked at %v before the reset period", at)
	}
	c.Advance(time.Minute)
	if at := got(tk.C()); at.IsZero() {
		t.Error("no tick a reset period later")
	}
	tk.Stop()
	c.Advance(2 * time.Hour)
	if at := got(tk.C()); !at.IsZero() {
		t.Errorf("a stopped ticker ticked at %v", at)
	}
}

func TestSettingTheClockBackFiresNothing(t *testing.T) {
	t.Parallel()
	c := New(t0)
	tm := c.NewTimer(time.Second)
	c.Set(t0.Add(-time.Hour))
	if at := got(tm.C()); !at.IsZero() {
		t.Errorf("fired at %v when the clock went back", at)
	}
	if !c.Now().Equal(t0.Add(-time.Hour)) {
		t.Errorf("Now() = %v", c.Now())
	}
	c.Set(t0.Add(time.Second))
	if at := got(tm.C()); !at.Equal(t0.Add(time.Second)) {
		t.Errorf("received %v, want %v", at, t0.Add(time.Second))
	}
}
