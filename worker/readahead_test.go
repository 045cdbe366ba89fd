package worker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// TestPoolAheadTakesWhatTheNextPicksTake: the tasks read ahead are the ones
// the next picks take first, owner by owner in turn, leaving out those that
// need no read.
func TestPoolAheadTakesWhatTheNextPicksTake(t *testing.T) {
	t.Parallel()
	p := newPool(testPolicy, 100, 100)
	a := tasks(p, "a", "", 3)
	tasks(p, "b", "", 2)
	a[1].ahead = &aheadEntry{}
	got := p.ahead(4, func(t *task) bool { return t.ahead == nil })
	if want := []string{"a--0", "b--0", "b--1", "a--2"}; !slices.Equal(ids(got), want) {
		t.Fatalf("read ahead %v, want %v", ids(got), want)
	}
	picked, _ := p.pick(t0, 1)
	got = p.ahead(1, func(*task) bool { return true })
	if want := []string{"b--0"}; !slices.Equal(ids(got), want) {
		t.Fatalf("after picking %v, read ahead %v, want %v", ids(picked), ids(got), want)
	}
}

// TestPoolAheadLooksAtABoundedNumberOfTasks: with every waiting task read
// ahead already, ahead gives up after 4n of them, however the waiting are
// spread over owners.
func TestPoolAheadLooksAtABoundedNumberOfTasks(t *testing.T) {
	t.Parallel()
	for name, owners := range map[string]map[string]int{
		"one owner":                      {"a": 100},
		"many owners of one":             manyOwners(1000, 1, nil),
		"one deep among many of one":     manyOwners(1000, 1, map[string]int{"deep": 1000}),
		"fewer owners than the looks, 3": manyOwners(5, 3, nil),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newPool(testPolicy, 100, 100)
			waiting := 0
			for o, n := range owners {
				tasks(p, o, "", n)
				waiting += n
			}
			looked := 0
			p.ahead(8, func(*task) bool { looked++; return false })
			if want := min(32, waiting); looked != want {
				t.Fatalf("looked at %d tasks, want %d", looked, want)
			}
		})
	}
}

// manyOwners is n owners with each tasks waiting, and the owners of more.
func manyOwners(n, each int, more map[string]int) map[string]int {
	out := make(map[string]int, n+len(more))
	for i := range n {
		out[fmt.Sprintf("o%d", i)] = each
	}
	maps.Copy(out, more)
	return out
}

// TestSendEndsRememberWhatAnEntryReadAheadCanHaveMissed: an end after an
// entry's read makes the entry stale for readAheadAge at least, in whatever
// span it fell; an end before the read does not.
func TestSendEndsRememberWhatAnEntryReadAheadCanHaveMissed(t *testing.T) {
	t.Parallel()
	w := &Worker{ends: newSendEnds()}
	now := t0
	w.ends.ended("x", now)
	read := &aheadEntry{at: now, seq: w.ends.mark()}
	if !w.stands(read, "x", now) {
		t.Fatal("an entry read after the end of its delivery's send does not stand")
	}
	now = now.Add(readAheadAge - time.Millisecond)
	w.ends.ended("y", now) // another delivery
	if !w.stands(read, "x", now) {
		t.Fatal("an end of another delivery made the entry stale")
	}
	w.ends.ended("x", now)
	for _, d := range []time.Duration{0, time.Millisecond, readAheadAge / 2} {
		w.ends.ended("z", now.Add(d)) // spans turn over
		if w.stands(read, "x", now.Add(d)) {
			t.Fatalf("the entry stands %v after a later end of its delivery", d)
		}
	}
	if w.stands(read, "x", read.at.Add(readAheadAge)) {
		t.Fatal("an entry readAheadAge old stands")
	}
	if w.stands(nil, "x", now) {
		t.Fatal("no entry stands")
	}
}

// TestAnEntryReadAheadOfASettledCopyIsReadAgain: a copy of a delivery waits
// with its entry read ahead, pending, while another copy is sent; once that
// send is recorded, the waiting copy reads the entry again when its slot
// comes and is not sent.
func TestAnEntryReadAheadOfASettledCopyIsReadAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	gate := gateEmail(t, peer, 4)
	counter := &countingSender{Sender: gate}
	// Published below instead of relayed.
	ids := e.enqueueUnrelayed(store.Payload{Subject: "Once", Text: "t"}, e.channel(peer.Channel()), e.channel(mailTo("b@example.com")))
	x, y := ids[0], ids[1]
	cfg := testConfig()
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Concurrency: 1}}
	n := startNATS(t, t.TempDir())
	r := e.start(n, []channels.Sender{counter}, cfg)
	<-r.idle // the stream exists
	k := r.w.kinds[0]
	repair := e.sabotage("deliveries") // x's first send stays unrecorded
	// No message ids: JetStream keeps both copies of x, as after a redelivery.
	for _, id := range []string{x, y, x} {
		if _, err := n.JetStream().Publish(ctx, subject("email"), e.envelope(n, id)); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-gate.entered; got != x {
		t.Fatalf("first send of %s, want %s", got, x)
	}
	waitUntil(t, func() bool { held, _, _ := k.pool.state(); return held == 3 }, "the pool to hold the three messages")
	gate.release <- struct{}{} // x accepted, unrecorded: its slot goes to y
	if got := <-gate.entered; got != y {
		t.Fatalf("second send of %s, want %s", got, y)
	}
	if c := waitingTask(k.pool, x); c == nil || c.ahead == nil || c.ahead.entry.State != store.DeliveryPending {
		t.Fatalf("the waiting copy of %s has no pending entry read ahead: %+v", x, c)
	}
	repair()
	r.await(t, x, outcomeSent)
	close(gate.release)
	r.await(t, y, outcomeSent)
	r.await(t, x, outcomeSkipped)
	r.stop(t)
	if got := counter.calls.Load(); got != 2 {
		t.Errorf("%d sends, want 2: %s once and %s once", got, x, y)
	}
}

// waitingTask is the task of the delivery id waiting in p, or nil.
func waitingTask(p *pool, id string) *task {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.queues {
		for _, t := range q.tasks {
			if t.id == id {
				return t
			}
		}
	}
	return nil
}
