package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestNowFromReadsItsFunctionAndWaitsInRealTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	c := NowFrom(func() time.Time { return at })
	if !c.Now().Equal(at) {
		t.Errorf("Now() = %v, want %v", c.Now(), at)
	}
	tm := c.NewTimer(time.Millisecond)
	defer tm.Stop()
	select {
	case <-tm.C():
	case <-time.After(10 * time.Second):
		t.Fatal("a real timer of 1ms did not fire within 10s")
	}
}

func TestOrIsRealForNil(t *testing.T) {
	t.Parallel()
	if _, ok := Or(nil).(machine); !ok {
		t.Errorf("Or(nil) = %T, want the real clock", Or(nil))
	}
	c := NowFrom(time.Now)
	if Or(c) != c {
		t.Error("Or(c) is not c")
	}
}

// TestSleepWaitsOrEndsWithItsContext: Sleep returns true once d has passed
// on its clock, and false as soon as its context ends.
func TestSleepWaitsOrEndsWithItsContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Sleep(context.Background(), Real(), time.Minute) || time.Since(start) != time.Minute {
			t.Errorf("Sleep of a minute returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if Sleep(ctx, Real(), time.Hour) || time.Since(start) != time.Second {
			t.Errorf("Sleep of an hour whose context ended after a second: true or after %v", time.Since(start))
		}
	})
}
