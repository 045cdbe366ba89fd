package benchapp

import (
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/internal/clock"
)

// ShiftedClock is the real clock moved by an offset: time flows as it does,
// from wherever Set put it. A benchmark starts Herald on it a few seconds
// before an instant its subscriptions are due at.
type ShiftedClock struct{ off atomic.Int64 }

// Set makes Now return t from now on, and time flow on from there.
func (c *ShiftedClock) Set(t time.Time) { c.off.Store(int64(time.Until(t))) }

// Now is the shifted time.
func (c *ShiftedClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// After waits d of real time.
func (c *ShiftedClock) After(d time.Duration) <-chan time.Time { return clock.Real().After(d) }

// NewTimer is a real timer.
func (c *ShiftedClock) NewTimer(d time.Duration) clock.Timer { return clock.Real().NewTimer(d) }

// NewTicker is a real ticker.
func (c *ShiftedClock) NewTicker(d time.Duration) clock.Ticker { return clock.Real().NewTicker(d) }

// Real is the real time at which the clock reads t.
func (c *ShiftedClock) Real(t time.Time) time.Time { return t.Add(-time.Duration(c.off.Load())) }
