package worker

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
)

var testPolicy = breakerPolicy{probeMin: time.Second, probeMax: 4 * time.Second, failures: 3, window: time.Minute}

// tasks adds n tasks of owner to destination dest and returns them.
func tasks(p *pool, owner, dest string, n int) []*task {
	var out []*task
	for i := range n {
		t := &task{id: fmt.Sprintf("%s-%s-%d", owner, dest, i), owner: owner, destName: dest}
		p.add(t)
		out = append(out, t)
	}
	return out
}

func ids(ts []*task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.id
	}
	return out
}

// TestPoolTakesOwnersInTurn: one owner's burst waiting first delays another
// owner's task by no more than one pick.
func TestPoolTakesOwnersInTurn(t *testing.T) {
	t.Parallel()
	p := newPool(testPolicy, 100, 100)
	tasks(p, "a", "", 5)
	tasks(p, "b", "", 2)
	got, _ := p.pick(t0, 5)
	want := []string{"a--0", "b--0", "a--1", "b--1", "a--2"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("picked %v, want %v", ids(got), want)
	}
}

// TestPoolCaps: no destination and no owner has more sends at once than its cap.
func TestPoolCaps(t *testing.T) {
	t.Parallel()
	p := newPool(testPolicy, 2, 3)
	tasks(p, "a", "x", 5)
	tasks(p, "a", "y", 5)
	tasks(p, "b", "x", 5)
	got, _ := p.pick(t0, 10)
	// a and b in turn: x twice (then full), y twice (then a has 3).
	want := []string{"a-x-0", "b-x-0", "a-y-0", "a-y-1"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("picked %v, want %v", ids(got), want)
	}
	p.done(got[0]) // x has room again, a too
	got, _ = p.pick(t0, 10)
	if want := []string{"b-x-1"}; !slices.Equal(ids(got), want) { // y is full too
		t.Fatalf("then picked %v, want %v (x's room goes to the owner whose turn it is)", ids(got), want)
	}
}

// TestBreakerHoldsAfterFailuresInARow: transient failures below the count
// are charged; the one that reaches it holds the destination, whose tasks then
// wait, charged nothing, for a probe whose failures double its wait, until one
// gets through and releases them all.
func TestBreakerHoldsAfterFailuresInARow(t *testing.T) {
	t.Parallel()
	p := newPool(testPolicy, 10, 10)
	tasks(p, "a", "x", 10)
	now := t0
	sends, _ := p.pick(now, 3)
	for i, s := range sends {
		held, _, change := p.result(now, s, verdictTransient, errTest)
		if wantHeld := i == 2; held != wantHeld || (change == changeHeld) != wantHeld {
			t.Fatalf("failure %d: held %v, change %v", i+1, held, change)
		}
		if !held {
			p.done(s) // retried later through JetStream
		}
	}
	if got, wake := p.pick(now, 10); len(got) != 0 || !wake.Equal(now.Add(time.Second)) {
		t.Fatalf("while held: picked %v, wake at %v; want none before %v", ids(got), wake, now.Add(time.Second))
	}
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		now = now.Add(wait)
		probe, _ := p.pick(now, 10)
		if len(probe) != 1 || !probe[0].probe {
			t.Fatalf("at %v: picked %v, want one probe", now, ids(probe))
		}
		if held, _, _ := p.result(now, probe[0], verdictUnavailable, errTest); !held {
			t.Fatal("a failed probe is charged")
		}
	}
	now = now.Add(4 * time.Second)
	probe, _ := p.pick(now, 10)
	if held, _, change := p.result(now, probe[0], verdictOK, nil); held || change != changeReleased {
		t.Fatalf("probe through: held %v, change %v", held, change)
	}
	p.done(probe[0])
	if got, _ := p.pick(now, 10); len(got) != 7 {
		t.Fatalf("released: picked %d, want the 7 left", len(got))
	}
}

// TestBreakerStreakEndsWithTheWindowOrASuccess: failures spread wider than
// the window, or broken by a success, hold nothing.
func TestBreakerStreakEndsWithTheWindowOrASuccess(t *testing.T) {
	t.Parallel()
	d := &dest{}
	now := t0
	for i := range 10 {
		v := verdictTransient
		if i%3 == 2 {
			v = verdictRefused // the destination answered
		}
		if held, _ := d.record(testPolicy, now, false, v, errTest); held {
			t.Fatalf("send %d held", i)
		}
	}
	for i := range 10 {
		now = now.Add(testPolicy.window + time.Second)
		if held, _ := d.record(testPolicy, now, false, verdictTransient, errTest); held {
			t.Fatalf("failure %d, a window after the last, held", i)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		err  error
		want verdict
	}{
		{nil, verdictOK},
		{errors.New("451 try later"), verdictTransient},
		{fmt.Errorf("post: %w", errors.New("context deadline exceeded")), verdictTransient},
		{channels.Permanent(errors.New("550 no such user")), verdictRefused},
		{fmt.Errorf("connect: %w", refused), verdictUnavailable},
		{channels.Unavailable(errors.New("write email: no space left on device")), verdictUnavailable},
	} {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

var errTest = errors.New("451 try again later")

// TestPoolCallOffReachesSendsInFlight: a call-off takes the waiting tasks it
// names and marks the one being sent, which its destination then holds: that
// one is not put back among the waiting but left for the caller to let go,
// while the tasks it does not name wait on.
func TestPoolCallOffReachesSendsInFlight(t *testing.T) {
	t.Parallel()
	p := newPool(testPolicy, 1, 10)
	tasks(p, "a", "x", 3)
	other := tasks(p, "b", "y", 1)[0]
	now := t0
	sending, _ := p.pick(now, 1)
	if len(sending) != 1 || sending[0].owner != "a" {
		t.Fatalf("picked %v, want one of a's", ids(sending))
	}
	taken := p.callOff(func(t *task) bool { return t.owner == "a" })
	if len(taken) != 2 {
		t.Fatalf("call-off took %v, want a's two waiting", ids(taken))
	}
	held, calledOff, _ := p.result(now, sending[0], verdictUnavailable, errTest)
	if !held || !calledOff {
		t.Fatalf("the send in flight came back held %v, called off %v; want both", held, calledOff)
	}
	p.done(sending[0])
	if got, _ := p.pick(now, 10); len(got) != 1 || got[0] != other {
		t.Fatalf("after the call-off: picked %v, want only %s", ids(got), other.id)
	}
	if all, sending, _ := p.state(); all != 1 || sending != 1 {
		t.Errorf("pool holds %d, sending %d; want b's one, being sent", all, sending)
	}
}
