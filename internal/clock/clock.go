package clock

import (
	"context"
	"time"
)

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
	NewTimer(d time.Duration) Timer
	NewTicker(d time.Duration) Ticker
}

// Timer is a time.Timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	// Stop and Reset say whether the timer was armed, as time.Timer's do.
	Stop() bool
	Reset(d time.Duration) bool
}

// Ticker is a time.Ticker of a Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	Reset(d time.Duration)
}

// Real is the machine's clock.
func Real() Clock { return machine{} }

// Or returns c, or Real when c is nil: what a part does with the clock of
// options left empty.
func Or(c Clock) Clock {
	if c == nil {
		return machine{}
	}
	return c
}

// Sleep waits d on c and reports true, or false once ctx ends first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// NowFrom returns a clock whose time is now() and whose waits are real.
func NowFrom(now func() time.Time) Clock { return &nowFrom{machine{}, now} }

type machine struct{}

func (machine) Now() time.Time                         { return time.Now() }
func (machine) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (machine) NewTimer(d time.Duration) Timer         { return realTimer{time.NewTimer(d)} }
func (machine) NewTicker(d time.Duration) Ticker       { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time        { return t.t.C }
func (t realTimer) Stop() bool                 { return t.t.Stop() }
func (t realTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time   { return t.t.C }
func (t realTicker) Stop()                 { t.t.Stop() }
func (t realTicker) Reset(d time.Duration) { t.t.Reset(d) }

type nowFrom struct {
	machine
	now func() time.Time
}

func (c *nowFrom) Now() time.Time { return c.now() }
