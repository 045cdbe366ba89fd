package worker

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// dispatch starts the sends of the kind's pool, at most the kind's
// concurrency at once, until ctx ends; then it hands back the waiting
// messages and returns once every send it started has finished.
//
// A message takes its send slot and its claim in the ledger together, when
// the pool lets it go: a copy of it (redelivered while it waited, or handed
// to another process) finds the claim and is left to it, and a copy that
// comes after it was settled finds it settled. A message keeps its slot until
// its send was accepted, or, when maxUnrecordedPerSlot accepted sends per slot
// already await their record, until its outcome is in the ledger: a crash
// leaves at most three accepted, unrecorded sends per slot.
func (w *Worker) dispatch(ctx context.Context, k *kind) {
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := w.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := w.clock.Now()
		picked, wakeAt := k.pool.pick(now, w.allowed(k, now))
		if len(picked) > 0 {
			w.start(ctx, k, picked, &wg)
			continue
		}
		if r := w.rateWait(k, now); r > 0 && k.pool.waiting() {
			wakeAt = now.Add(r)
		}
		wait := time.Hour
		if !wakeAt.IsZero() {
			wait = max(wakeAt.Sub(now), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			w.handBack(k)
			return
		case <-k.pool.wake:
		case <-timer.C():
		}
	}
}

// allowed is how many sends may start now: the free slots, within the kind's
// rate limit.
func (w *Worker) allowed(k *kind, now time.Time) int {
	_, sending, _ := k.pool.state()
	n := k.cfg.Concurrency - sending
	if k.limiter != nil {
		n = min(n, int(k.limiter.TokensAt(now)))
	}
	return n
}

// rateWait is how long until the kind's rate limit lets the next send go.
func (w *Worker) rateWait(k *kind, now time.Time) time.Duration {
	if k.limiter == nil {
		return 0
	}
	r := k.limiter.ReserveN(now, 1)
	defer r.CancelAt(now)
	return r.DelayFrom(now)
}

// handBack gives the waiting messages back to JetStream when stopping, so that
// they go out again at once, here after a restart or in another process.
func (w *Worker) handBack(k *kind) {
	for _, t := range k.pool.take(nil) {
		w.settle(handBack(t.msg), t.id, outcomeReturned)
		w.report(t.id, outcomeReturned)
	}
}

// handBackDelay is the delay of a message handed back unsent. A plain Nak
// queues the message for redelivery in the server's memory only; a server
// restarted meanwhile waits out the ack wait before it hands it out again. A
// Nak with a delay writes the moment it is due into the consumer's state,
// which a restart keeps: it is due at once.
const handBackDelay = time.Millisecond

// handBack hands msg back unsent, to go out again at once.
func handBack(msg jetstream.Msg) error { return msg.NakWithDelay(handBackDelay) }

// start claims the picked tasks and starts a send for each that is to be sent.
func (w *Worker) start(ctx context.Context, k *kind, picked []*task, wg *sync.WaitGroup) {
	if k.limiter != nil {
		k.limiter.AllowN(w.clock.Now(), len(picked))
	}
	mine := picked[:0]
	var marks []*handling
	for _, t := range picked {
		m := w.handle(t)
		if m == nil {
			// A copy of this message is claimed here: it settles the
			// message, whose progress it keeps telling JetStream.
			k.pool.done(t)
			w.finish(k, t, outcomeBusy)
			continue
		}
		mine, marks = append(mine, t), append(marks, m)
	}
	if len(mine) == 0 {
		return
	}
	if err := w.claim(ctx, k, mine); err != nil {
		w.log.Error("claim deliveries", "kind", k.kind, "err", err)
		for i, t := range mine {
			w.running.CompareAndDelete(t.id, marks[i])
			k.pool.requeue(t, w.clock.Now().Add(w.cfg.BackoffBase))
		}
		return
	}
	for i, t := range mine {
		m := marks[i]
		if !t.claimed && redelivered(t) {
			w.metrics.redelivered.WithLabelValues(string(k.kind)).Inc()
		}
		t.claimed = true
		if t.entry.Busy {
			// Claimed by a process that is sending it: held until that
			// claim is settled or lapses.
			w.running.CompareAndDelete(t.id, m)
			k.pool.requeue(t, w.clock.Now().Add(w.cfg.AckWait/2))
			w.report(t.id, outcomeBusy)
			continue
		}
		wg.Go(func() {
			o := w.deliver(ctx, k, t)
			if w.ends != nil {
				w.ends.ended(t.id, w.clock.Now())
			}
			w.running.CompareAndDelete(t.id, m)
			if o != outcomeHeld {
				k.pool.done(t)
			}
			w.finish(k, t, o)
		})
	}
}

// handling marks one send of a task's delivery as handled here (in
// Worker.running, by delivery id).
type handling struct{ t *task }

// handle marks t's delivery as handled here and returns the mark, or nil
// when another copy of its message is handled here. A held delivery is back
// among the waiting before the goroutine of its last send has let go of its
// mark, and may be picked again at once as its destination's probe: that
// pick is t itself, not a copy, and takes the mark over, which the finishing
// goroutine then leaves alone.
func (w *Worker) handle(t *task) *handling {
	m := &handling{t}
	for {
		v, busy := w.running.LoadOrStore(t.id, m)
		switch {
		case !busy:
			return m
		case v.(*handling).t != t:
			return nil
		case w.running.CompareAndSwap(t.id, v, m):
			return m
		}
	}
}

// claim reads and claims the ledger entries of kind k's tasks. With a ledger
// whose claims only read, a task whose entry was read ahead, and still
// stands, takes it, and a read reads ahead for the waiting tasks too.
func (w *Worker) claim(ctx context.Context, k *kind, ts []*task) error {
	read, now := w.ledger.Claim, w.clock.Now()
	var ahead []*task
	if r, ok := w.ledger.(entryReader); ok {
		if ts = w.takeAhead(ts, now); len(ts) == 0 {
			return nil
		}
		read = r.Entries
		ahead = k.pool.ahead(readAhead, func(t *task) bool { return !w.stands(t.ahead, t.id, now) })
	}
	return w.readEntries(ctx, read, now, ts, ahead)
}

// readEntries reads with read, at now, the entries of the tasks, which are
// claimed so, and those of the waiting tasks ahead, which keep theirs for
// their own claims.
func (w *Worker) readEntries(ctx context.Context, read func(context.Context, []string) (map[string]Entry, error),
	now time.Time, ts, ahead []*task) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerTimeout)
	defer cancel()
	ids := make([]string, 0, len(ts)+len(ahead))
	for _, t := range ts {
		ids = append(ids, t.id)
	}
	for _, t := range ahead {
		ids = append(ids, t.id)
	}
	var seq uint64
	if len(ahead) > 0 {
		seq = w.ends.mark()
	}
	entries, err := read(ctx, ids)
	if err != nil {
		return err
	}
	for _, t := range ts {
		t.entry, t.found = entries[t.id]
	}
	for _, t := range ahead {
		e, found := entries[t.id]
		t.ahead = &aheadEntry{entry: e, found: found, at: now, seq: seq}
	}
	return nil
}

// finish counts what became of a message and tells the test hook.
func (w *Worker) finish(k *kind, t *task, o outcome) {
	w.metrics.handled.WithLabelValues(string(k.kind), o.String()).Inc()
	w.report(t.id, o)
}

// report tells the test hook what became of a message.
func (w *Worker) report(id string, o outcome) {
	if w.onSettle != nil {
		w.onSettle(id, o)
	}
}

// redelivered reports whether JetStream handed t's message out more often
// than it was tried (each failed try hands it back once): a copy that went
// out again while a process held it, or after a process stopped or died.
func redelivered(t *task) bool {
	md, err := t.msg.Metadata()
	return t.found && err == nil && md.NumDelivered > uint64(t.entry.Attempts)+1
}
