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
type fireQueue struct {
	mu      sync.Mutex
	fires   []Fire // fires[head:] are queued
	head    int
	waiting int           // pushes waiting for room
	limit   int           // fires queued before push waits
	ready   chan struct{} // holds a token when fires may be queued
	room    chan struct{} // holds a token when there may be room for a waiting push
	done    chan struct{} // closed by stop
	once    sync.Once
}

// newFireQueue returns an empty queue on which push waits once limit fires are queued.
func newFireQueue(limit int) *fireQueue {
	return &fireQueue{limit: limit, ready: make(chan struct{}, 1), room: make(chan struct{}, 1), done: make(chan struct{})}
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
		n := min(len(fs), q.limit-q.len())
		if q.len() == 0 {
			wake(q.ready)
		}
		q.fires = append(q.fires, fs[:n]...)
		fs = fs[n:]
		if q.waiting > 0 && q.len() < q.limit {
			wake(q.room) // pass the room on to the next waiting push
		}
	}
	return nil
}

// awaitRoom waits until the queue has room for a fire, and reports false
// once the queue is stopped. q.mu is held, and let go while it waits.
func (q *fireQueue) awaitRoom() bool {
	for q.len() >= q.limit {
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

// take waits for a fire, until ctx ends, and moves up to cap(into) of the
// queued fires, oldest first, into into[:0].
func (q *fireQueue) take(ctx context.Context, into []Fire) ([]Fire, error) {
	for {
		select {
		case <-q.ready:
		case <-ctx.Done():
			return into[:0], ctx.Err()
		}
		q.mu.Lock()
		n := min(q.len(), cap(into))
		into = append(into[:0], q.fires[q.head:q.head+n]...)
		clear(q.fires[q.head : q.head+n])
		q.head += n
		if q.len() == 0 {
			q.head = 0
			q.fires = q.fires[:0]
			if cap(q.fires) > 4096 {
				q.fires = nil // a burst's room is given back
			}
		}
		if q.len() > 0 {
			wake(q.ready) // for the next take
		}
		if q.waiting > 0 && n > 0 {
			wake(q.room)
		}
		q.mu.Unlock()
		if n > 0 {
			return into, nil
		}
	}
}

// len is how many fires are queued; q.mu is held.
func (q *fireQueue) len() int { return len(q.fires) - q.head }

// wake leaves a token in ch, which holds at most one.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
