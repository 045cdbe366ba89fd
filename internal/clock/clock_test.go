package clock

import (
	"testing"
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
