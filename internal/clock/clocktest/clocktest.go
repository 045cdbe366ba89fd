package clocktest

import (
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/clock"
)

// Clock is a clock that moves only when told to.
type Clock struct {
	mu      sync.Mutex
	t       time.Time
	waiters []*waiter
}

var _ clock.Clock = (*Clock)(nil)

// waiter is one armed timer or ticker.
type waiter struct {
	c      *Clock
	at     time.Time
	period time.Duration // a ticker's; 0 for a timer
	ch     chan time.Time
}

// New returns a clock stopped at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// After returns a channel that receives once the clock has moved by d.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// NewTimer returns a timer that fires once the clock has moved by d; at once
// when d <= 0.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	w := &waiter{c: c, ch: make(chan time.Time, 1)}
	w.Reset(d)
	return timer{w}
}

// NewTicker returns a ticker that fires each time the clock has moved by d
// since its last tick. Like time.Ticker's, its channel holds one tick: a
// move across several periods delivers one.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("clocktest: non-positive interval for NewTicker")
	}
	w := &waiter{c: c, period: d, ch: make(chan time.Time, 1)}
	w.Reset(d)
	return ticker{w}
}

// Advance moves the clock forward by d and fires what came due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	to := c.t.Add(d)
	c.mu.Unlock()
	c.Set(to)
}

// Set moves the clock to t and fires what came due, in the order of their
// instants. Moving it back fires nothing.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
	for {
		i := c.nextDue()
		if i < 0 {
			return
		}
		w := c.waiters[i]
		select {
		case w.ch <- w.at:
		default: // a ticker whose last tick is still unread drops this one
		}
		if w.period == 0 {
			c.waiters = slices.Delete(c.waiters, i, i+1)
			continue
		}
		for !w.at.After(c.t) {
			w.at = w.at.Add(w.period)
		}
	}
}

// Waiting says how many timers and tickers are armed: a test that moves the
// clock waits first for the code under test to arm the one it means.
func (c *Clock) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// nextDue returns the index of the earliest waiter due at the clock's time, or -1.
func (c *Clock) nextDue() int {
	at := -1
	for i, w := range c.waiters {
		if !w.at.After(c.t) && (at < 0 || w.at.Before(c.waiters[at].at)) {
			at = i
		}
	}
	return at
}

// Stop disarms w and says whether it was armed.
func (w *waiter) Stop() bool {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.waiters, w)
	if i < 0 {
		return false
	}
	c.waiters = slices.Delete(c.waiters, i, i+1)
	return true
}

// Reset arms w to fire once the clock has moved by d and says whether it was
// armed. A timer due at once fires at once. Like time.Timer's since Go 1.23,
// a tick or fire not yet received is dropped.
func (w *waiter) Reset(d time.Duration) bool {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.waiters, w)
	armed := i >= 0
	if armed {
		c.waiters = slices.Delete(c.waiters, i, i+1)
	}
	select {
	case <-w.ch:
	default:
	}
	w.at = c.t.Add(d)
	if w.period == 0 && d <= 0 {
		w.ch <- c.t
		return armed
	}
	if w.period != 0 {
		if d <= 0 {
			panic("clocktest: non-positive interval for Ticker.Reset")
		}
		w.period = d
	}
	c.waiters = append(c.waiters, w)
	return armed
}

type timer struct{ w *waiter }

func (t timer) C() <-chan time.Time        { return t.w.ch }
func (t timer) Stop() bool                 { return t.w.Stop() }
func (t timer) Reset(d time.Duration) bool { return t.w.Reset(d) }

type ticker struct{ w *waiter }

func (t ticker) C() <-chan time.Time   { return t.w.ch }
func (t ticker) Stop()                 { t.w.Stop() }
func (t ticker) Reset(d time.Duration) { t.w.Reset(d) }
