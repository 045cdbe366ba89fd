package engine

import (
	"context"
	"errors"
	"sync"
)

// maxQueuedFires bounds the fires waiting for the claimer. A burst of that
// many (one per trigger of the subscriptions due at one instant) is taken
// without making the scheduler wait; past it, the scheduler waits for the
// claimer, as the bound on memory requires (a fire is about 40 bytes).
const maxQueuedFires = 1 << 20

// fireQueue hands fires from the scheduler to the claimer. Its push does
// not wait while fewer than maxQueuedFires are queued, so a burst that the
// claimer takes in many batches waits here, not in the scheduler's loop,
// and the triggers of the seconds that follow are handed over on time. The
// scheduler pushes every fire due at an instant at once.
//
// Fires wait in a lane per owner, and take serves the lanes in turn, one
// fire each: one owner's burst of 100,000 fires delays another owner's fire
// of the same instant by one fire, not by the burst.
type fireQueue struct {
	mu      sync.Mutex
	lanes   map[string]*lane // the owners with fires queued
	ring    []*lane          // the same, in turn
	turn    int              // ring index of the lane served next
	n       int              // fires queued
	waiting int              // pushes waiting for room
	limit   int              // fires queued before push waits
	ready   chan struct{}    // holds a token when fires may be queued
	room    chan struct{}    // holds a token when there may be room for a waiting push
	done    chan struct{}    // closed by stop
	once    sync.Once
}

// lane is one owner's fires, oldest first from head.
type lane struct {
	owner string
	fires []Fire
	head  int
}

// newFireQueue returns an empty queue on which push waits once limit fires are queued.
func newFireQueue(limit int) *fireQueue {
	return &fireQueue{lanes: map[string]*lane{}, limit: limit, ready: make(chan struct{}, 1), room: make(chan struct{}, 1),
		done: make(chan struct{})}
}

// stop makes a push that waits for room, and every later one, return
// errQueueStopped.
func (q *fireQueue) stop() { q.once.Do(func() { close(q.done) }) }

// errQueueStopped is push's answer once the queue is stopped.
var errQueueStopped = errors.New("the engine is stopping")

// push queues fs, in order; it waits only while the queue is full, until
// the queue is stopped (then fires of fs may be left out). A burst of fires
// is queued at the cost of one lock, and the taker is woken only when the
// queue was empty.
func (q *fireQueue) push(fs ...Fire) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(fs) > 0 {
		if !q.awaitRoom() {
			return errQueueStopped
		}
		n := min(len(fs), q.limit-q.n)
		if q.n == 0 {
			wake(q.ready)
		}
		for _, f := range fs[:n] {
			q.add(f)
		}
		fs = fs[n:]
		if q.waiting > 0 && q.n < q.limit {
			wake(q.room) // pass the room on to the next waiting push
		}
	}
	return nil
}

// awaitRoom waits until the queue has room for a fire, and reports false
// once the queue is stopped. q.mu is held, and let go while it waits.
func (q *fireQueue) awaitRoom() bool {
	for q.n >= q.limit {
		q.waiting++
		q.mu.Unlock()
		var stopped bool
		select {
		case <-q.room:
		case <-q.done:
			stopped = true
		}
		q.mu.Lock()
		q.waiting--
		if stopped {
			return false
		}
	}
	select {
	case <-q.done:
		return false
	default:
		return true
	}
}

// add queues f in its owner's lane; q.mu is held.
func (q *fireQueue) add(f Fire) {
	l := q.lanes[f.Owner]
	if l == nil {
		l = &lane{owner: f.Owner}
		q.lanes[f.Owner] = l
		q.ring = append(q.ring, l)
	}
	l.fires = append(l.fires, f)
	q.n++
}

// take waits for a fire, until ctx ends, and moves up to cap(into) of the
// queued fires into into[:0]: one from each owner's lane in turn, each
// lane's oldest first.
func (q *fireQueue) take(ctx context.Context, into []Fire) ([]Fire, error) {
	for {
		select {
		case <-q.ready:
		case <-ctx.Done():
			return into[:0], ctx.Err()
		}
		q.mu.Lock()
		into = into[:0]
		for len(into) < cap(into) && q.n > 0 {
			into = append(into, q.next())
		}
		if q.n > 0 {
			wake(q.ready) // for the next take
		}
		if q.waiting > 0 && len(into) > 0 {
			wake(q.room)
		}
		q.mu.Unlock()
		if len(into) > 0 {
			return into, nil
		}
	}
}

// next takes the oldest fire of the lane whose turn it is; q.mu is held and
// q.n > 0.
func (q *fireQueue) next() Fire {
	q.turn %= len(q.ring)
	l := q.ring[q.turn]
	f := l.fires[l.head]
	l.fires[l.head] = Fire{}
	l.head++
	q.n--
	if l.head == len(l.fires) { // the lane is empty: its room is given back
		delete(q.lanes, l.owner)
		q.ring = append(q.ring[:q.turn], q.ring[q.turn+1:]...)
	} else {
		q.turn++
	}
	return f
}

// wake leaves a token in ch, which holds at most one.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
