package worker

import (
	"slices"
	"sync"
	"time"
)

// pool is what a kind's consumer holds: every message taken from JetStream,
// from the moment it was fetched until it is settled, waiting for a send slot
// or being sent. The consumer tells JetStream that each is in progress while
// it holds it, so none is handed out again to anyone while this process
// lives.
//
// Waiting messages are taken round-robin by owner, so that one owner's burst
// or dead receivers delay another owner's delivery by no more than one send,
// and only as their destination lets them go: a held destination (see dest)
// keeps its messages waiting, and no destination or owner has more sends at
// once than its cap.
type pool struct {
	policy   breakerPolicy
	perDest  int // sends to one destination at once
	perOwner int // sends of one owner at once

	mu      sync.Mutex
	queues  map[string]*queue // waiting tasks by owner
	ring    []string          // owners with waiting tasks, in turn
	turn    int               // ring index of the owner served next
	dests   map[string]*dest
	owners  map[string]int // sends in flight by owner
	sending int
	all     map[*task]struct{} // every task held
	bytes   int64              // of the messages held

	wake  chan struct{} // a task may have become startable
	freed chan struct{} // a task left the pool: there may be room to fetch
}

// queue is an owner's waiting tasks, oldest first.
type queue struct{ tasks []*task }

func newPool(p breakerPolicy, perDest, perOwner int) *pool {
	return &pool{policy: p, perDest: perDest, perOwner: perOwner,
		queues: map[string]*queue{}, dests: map[string]*dest{}, owners: map[string]int{}, all: map[*task]struct{}{},
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1)}
}

// add holds t, fetched just now, until done or drain lets it go.
func (p *pool) add(t *task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.all[t] = struct{}{}
	p.bytes += int64(t.size)
	d := p.dests[t.destName]
	if d == nil {
		d = &dest{name: t.destName}
		p.dests[t.destName] = d
	}
	d.held++
	t.dest = d
	p.enqueue(t, false)
}

// enqueue puts t among the waiting, at its owner's front when it was taken
// from there; p.mu is held.
func (p *pool) enqueue(t *task, front bool) {
	q := p.queues[t.owner]
	if q == nil {
		q = &queue{}
		p.queues[t.owner] = q
		p.ring = append(p.ring, t.owner)
	}
	if front {
		q.tasks = slices.Insert(q.tasks, 0, t)
	} else {
		q.tasks = append(q.tasks, t)
	}
	signal(p.wake)
}

// room is how many messages and bytes more the pool may hold.
func (p *pool) room(maxTasks int, maxBytes int64) (int, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maxTasks - len(p.all), maxBytes - p.bytes
}

// pick takes up to n waiting tasks that may be sent now, owner by owner in
// turn, and marks them sending; a task whose destination is held becomes its
// probe (task.probe). When it takes none, wakeAt is when a waiting task may
// next become startable by time alone (zero: only a change in the pool can).
func (p *pool) pick(now time.Time, n int) (picked []*task, wakeAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(picked) < n && len(p.ring) > 0 {
		t, i := p.next(now, &wakeAt)
		if t == nil {
			break
		}
		q := p.queues[t.owner]
		q.tasks = slices.DeleteFunc(q.tasks, func(x *task) bool { return x == t })
		p.turn = i + 1
		if len(q.tasks) == 0 {
			delete(p.queues, t.owner)
			p.ring = slices.Delete(p.ring, i, i+1)
			p.turn = i
		}
		t.dest.sending++
		p.owners[t.owner]++
		p.sending++
		picked = append(picked, t)
	}
	if len(picked) > 0 {
		wakeAt = time.Time{}
	}
	return picked, wakeAt
}

// next finds the first startable task of the owners in turn from p.turn and
// returns it with its owner's ring index, lowering *wakeAt to when a task it
// passed may become startable; p.mu is held.
func (p *pool) next(now time.Time, wakeAt *time.Time) (*task, int) {
	for k := range len(p.ring) {
		i := (p.turn + k) % len(p.ring)
		owner := p.ring[i]
		if p.owners[owner] >= p.perOwner {
			continue
		}
		for _, t := range p.queues[owner].tasks {
			if t.notBefore.After(now) {
				earliest(wakeAt, t.notBefore)
				continue
			}
			if t.dest.sending >= p.perDest {
				continue
			}
			ok, probe := t.dest.mayStart(now)
			if !ok {
				earliest(wakeAt, t.dest.wakeAt())
				continue
			}
			t.probe = probe
			return t, i
		}
	}
	return nil, 0
}

// ahead returns up to n waiting tasks for which need holds, the ones the
// next picks are likeliest to take first: the owners' oldest in turn from
// the next owner, then their second oldest, and so on, looking at no more
// than 4n tasks.
func (p *pool) ahead(n int, need func(*task) bool) []*task {
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := 4 * n
	queues := make([]*queue, 0, min(len(p.ring), limit))
	for k := 0; k < len(p.ring) && k < limit; k++ {
		queues = append(queues, p.queues[p.ring[(p.turn+k)%len(p.ring)]])
	}
	var out []*task
	for depth, looked := 0, 0; len(queues) > 0; depth++ {
		deeper := queues[:0] // the queues with a task below this depth
		for _, q := range queues {
			if len(out) == n || looked == limit {
				return out
			}
			looked++
			if t := q.tasks[depth]; need(t) {
				out = append(out, t)
			}
			if len(q.tasks) > depth+1 {
				deeper = append(deeper, q)
			}
		}
		queues = deeper
	}
	return out
}

// earliest lowers *at to t when t is set and comes first.
func earliest(at *time.Time, t time.Time) {
	if !t.IsZero() && (at.IsZero() || t.Before(*at)) {
		*at = t
	}
}

// result records how the send of picked task t ended and reports whether t is
// held: then it waits again, at its owner's front, charged nothing, unless
// it was called off while it was sent (calledOff): then it stays picked for
// the caller to let go, as the call-off would have had it been waiting.
func (p *pool) result(now time.Time, t *task, r verdict, err error) (held, calledOff bool, change stateChange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	held, change = t.dest.record(p.policy, now, t.probe, r, err)
	t.probe = false
	calledOff = held && t.calledOff
	if held && !calledOff {
		p.unpick(t)
		p.enqueue(t, true)
	}
	if change == changeReleased || t.dest.wakeAt().IsZero() {
		signal(p.wake) // released, or the probe is over
	}
	return held, calledOff, change
}

// requeue puts picked task t back among the waiting, startable from notBefore.
func (p *pool) requeue(t *task, notBefore time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.probe {
		t.dest.probing, t.probe = false, false
	}
	p.unpick(t)
	t.notBefore = notBefore
	p.enqueue(t, true)
}

// unpick undoes pick's counts for t; p.mu is held.
func (p *pool) unpick(t *task) {
	t.dest.sending--
	p.sending--
	if p.owners[t.owner]--; p.owners[t.owner] == 0 {
		delete(p.owners, t.owner)
	}
}

// accepted lets picked task t's slot go once its send was accepted, while t
// stays held until done: its outcome is yet to be recorded.
func (p *pool) accepted(t *task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freeSlot(t)
	signal(p.wake)
}

// done lets picked task t go: settled, or left to another copy.
func (p *pool) done(t *task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freeSlot(t)
	p.release(t)
	signal(p.wake)
}

// freeSlot undoes pick's counts for t once; p.mu is held.
func (p *pool) freeSlot(t *task) {
	if t.slotFreed {
		return
	}
	if t.probe {
		t.dest.probing, t.probe = false, false
	}
	p.unpick(t)
	t.slotFreed = true
}

// release forgets t, and its destination once nothing of it is held, so that
// the destinations kept are those of the tasks held (a held one forgotten is
// probed by its next message at once); p.mu is held.
func (p *pool) release(t *task) {
	delete(p.all, t)
	p.bytes -= int64(t.size)
	if t.dest.held--; t.dest.held == 0 {
		delete(p.dests, t.dest.name)
	}
	signal(p.freed)
}

// take removes the waiting tasks match selects (all with a nil match) and
// returns them: they are no longer held, and the caller settles each.
func (p *pool) take(match func(*task) bool) []*task {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked(match)
}

// callOff takes the waiting tasks match selects, as take does, and marks
// those being sent called off: one whose send comes back held is let go
// then (see result) rather than wait again for its destination.
func (p *pool) callOff(match func(*task) bool) []*task {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.takeLocked(match)
	for t := range p.all {
		if match(t) {
			t.calledOff = true
		}
	}
	return out
}

// takeLocked is take; p.mu is held.
func (p *pool) takeLocked(match func(*task) bool) []*task {
	var out []*task
	for owner, q := range p.queues {
		q.tasks = slices.DeleteFunc(q.tasks, func(t *task) bool {
			if match != nil && !match(t) {
				return false
			}
			out = append(out, t)
			p.release(t)
			return true
		})
		if len(q.tasks) == 0 {
			delete(p.queues, owner)
			p.ring = slices.DeleteFunc(p.ring, func(o string) bool { return o == owner })
		}
	}
	p.turn = 0
	return out
}

// stale returns the tasks held that JetStream was last told of before since,
// marking them told at now.
func (p *pool) stale(since, now time.Time) []*task {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*task
	for t := range p.all {
		if t.touched.Before(since) {
			t.touched = now
			out = append(out, t)
		}
	}
	return out
}

// heldDefault reports whether the kind's one destination of its own (its
// provider in the process's configuration: an SMTP relay, an outbox folder)
// is held, since when and why.
func (p *pool) heldDefault() (since time.Time, why string, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.dests[""]; d != nil && d.open {
		return d.heldAt, d.why, true
	}
	return time.Time{}, "", false
}

// waiting reports whether a task waits to be picked.
func (p *pool) waiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ring) > 0
}

// state is what the pool holds, for the metrics.
func (p *pool) state() (held, sending, heldDests int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.dests {
		if d.open {
			heldDests++
		}
	}
	return len(p.all), p.sending, heldDests
}

// signal leaves a token in ch, which holds at most one.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
