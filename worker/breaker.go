package worker

import (
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/heraldhq/herald/channels"
)

// verdict is how a send ended, as the breaker of its destination reads it.
type verdict int

const (
	verdictOK          verdict = iota // accepted
	verdictRefused                    // refused for good: the destination answered
	verdictTransient                  // failed for a reason that can pass (a 4xx reply, a hang, a 5xx of a webhook)
	verdictUnavailable                // nothing sent: no connection, an unwritable outbox
)

// classify reads a send's error. A send cut by its own timeout is transient:
// the destination took the connection and then did not answer.
func classify(err error) verdict {
	switch {
	case err == nil:
		return verdictOK
	case channels.IsUnavailable(err) || unreachable(err):
		return verdictUnavailable
	case channels.IsPermanent(err):
		return verdictRefused
	}
	return verdictTransient
}

// unreachable reports whether a send failed because the provider could not be
// connected to at all, so that nothing was sent.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED)
}

// breakerPolicy says when a destination is held and how it is probed.
type breakerPolicy struct {
	// probeMin and probeMax pace the probes of a held destination: the first
	// after probeMin, each next after twice the last, up to probeMax.
	probeMin, probeMax time.Duration
	// failures transient failures in a row, the first no longer than window
	// before the last, hold the destination as unavailable does at once.
	failures int
	window   time.Duration
}

// dest is one destination of a kind, the provider its messages go to, with
// its breaker. A destination that cannot take messages (unavailable at once,
// or failing transiently failures times in a row) is held: its deliveries wait
// as timers, not in send slots, and are charged no attempt, while one send at
// a time probes it, after a delay that doubles from probeMin to probeMax. The
// first probe that gets through releases every delivery held for it. Its
// fields are guarded by the pool's lock.
type dest struct {
	name    string
	sending int // sends to it in flight
	held    int // its tasks in the pool, waiting or sending

	open    bool
	heldAt  time.Time // when it was held
	why     string    // the failure that held it
	probing bool
	next    time.Time     // when the next probe may go
	delay   time.Duration // the wait before the probe after the next one
	streak  int           // transient failures in a row
	since   time.Time     // when the streak began
}

// mayStart reports whether a send to d may start at now, and whether it is
// the probe of a held destination; a probe it lets go marks d probing.
func (d *dest) mayStart(now time.Time) (ok, probe bool) {
	switch {
	case !d.open:
		return true, false
	case d.probing || now.Before(d.next):
		return false, false
	}
	d.probing = true
	return true, true
}

// wakeAt is when a held d may next let a send go; zero when it needs no timer.
func (d *dest) wakeAt() time.Time {
	if !d.open || d.probing {
		return time.Time{}
	}
	return d.next
}

// record takes the result of a send to d that started while d was as probe
// says, failing with err, and reports whether the send is held (handed back
// to wait for the destination, charged nothing) and how d's state changed.
func (d *dest) record(p breakerPolicy, now time.Time, probe bool, r verdict, err error) (held bool, change stateChange) {
	held, change = d.result(p, now, probe, r)
	if change == changeHeld {
		d.heldAt, d.why = now, cut(err.Error(), 256)
	}
	return held, change
}

// cut is s cut to n bytes at most.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// result is record's state machine.
func (d *dest) result(p breakerPolicy, now time.Time, probe bool, r verdict) (held bool, change stateChange) {
	if probe {
		d.probing = false
	}
	switch r {
	case verdictOK, verdictRefused:
		d.streak = 0
		if d.open {
			d.open = false
			return false, changeReleased
		}
		return false, changeNone
	case verdictUnavailable:
		d.streak = 0
		return true, d.hold(p, now, probe)
	}
	if d.open {
		return true, d.hold(p, now, probe)
	}
	if d.streak == 0 || now.Sub(d.since) > p.window {
		d.streak, d.since = 0, now
	}
	d.streak++
	if d.streak < p.failures {
		return false, changeNone
	}
	d.streak = 0
	return true, d.hold(p, now, probe)
}

// hold opens d, or, after a failed probe, waits twice as long for the next.
func (d *dest) hold(p breakerPolicy, now time.Time, probe bool) stateChange {
	switch {
	case !d.open:
		d.open, d.delay = true, p.probeMin
	case probe:
		d.delay = min(2*d.delay, p.probeMax)
	default:
		return changeNone // a send begun before d was held
	}
	d.next = now.Add(d.delay)
	if probe {
		return changeNone
	}
	return changeHeld
}

// stateChange is what a send's result did to its destination.
type stateChange int

const (
	changeNone     stateChange = iota
	changeHeld                 // the destination is held from now on
	changeReleased             // a held destination takes messages again
)
