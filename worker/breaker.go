package worker

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// breaker holds a kind's sends while its provider (the SMTP relay, the SMS gateway)
// cannot be reached at all. The first send that cannot connect opens it: the kind's
// sends wait in their slots, so its consumer stops taking messages, and one send at a
// time probes the provider, after a delay that doubles from min to max. The first probe
// that connects closes it, and every waiting send goes at once. Waiting is no attempt.
type breaker struct {
	min, max time.Duration

	mu      sync.Mutex
	open    bool
	probing bool
	next    time.Time     // when the next probe may go
	delay   time.Duration // the wait before the next probe after this one
	changed chan struct{} // closed and replaced when the state changes
}

func newBreaker(min, max time.Duration) *breaker {
	return &breaker{min: min, max: max, changed: make(chan struct{})}
}

// acquire returns when a send may go: at once while the breaker is closed; while it is
// open, when this send is the probe (probe is then true). It returns ctx's error when ctx
// ends first.
func (b *breaker) acquire(ctx context.Context) (probe bool, err error) {
	for {
		b.mu.Lock()
		if !b.open {
			b.mu.Unlock()
			return false, nil
		}
		now := time.Now()
		if !b.probing && !now.Before(b.next) {
			b.probing = true
			b.mu.Unlock()
			return true, nil
		}
		wait, changed := b.next.Sub(now), b.changed
		b.mu.Unlock()
		if wait <= 0 {
			wait = b.max // a probe is under way: its outcome wakes us
		}
		t := time.NewTimer(wait)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
		t.Stop()
	}
}

// done records how a send that acquire let go ended: unreachable when it could not
// connect at all.
func (b *breaker) done(probe, unreachable bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case unreachable && !b.open:
		b.open, b.delay = true, b.min
		b.next = time.Now().Add(b.delay)
	case unreachable && probe:
		b.probing = false
		b.delay = min(2*b.delay, b.max)
		b.next = time.Now().Add(b.delay)
	case !unreachable && b.open:
		b.open, b.probing = false, false
	case probe:
		b.probing = false
	default:
		return
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// isOpen reports whether the kind's provider is held as unreachable.
func (b *breaker) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// unreachable reports whether a send failed because the provider could not be
// connected to at all, so that nothing was sent.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED)
}
