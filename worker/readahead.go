package worker

import (
	"context"
	"sync"
	"time"
)

// A message claims its ledger entry as it takes its send slot (see
// dispatch), and slots free one at a time: most claims would read one entry.
// When the ledger's claim only reads (entryReader), a claim that has to read
// also reads the entries of up to readAhead messages waiting behind it, in
// the same query, and each of those takes the entry read for it as its claim
// when its slot comes, unless the entry is readAheadAge old, or a send of the
// same delivery ended here after it was read (ends).
const (
	readAhead    = 32
	readAheadAge = time.Second
)

// An entryReader is a ledger whose claims only read, since one process sends
// with it: SQLiteLedger. A claim held by no one lets an entry read ahead
// stand for one read at the send, as long as this process settled no copy of
// the delivery meanwhile.
type entryReader interface {
	// Entries reads the entries of the deliveries ids, claiming none; an id
	// the ledger does not know is left out of the map.
	Entries(ctx context.Context, ids []string) (map[string]Entry, error)
}

// aheadEntry is a task's ledger entry read ahead of its send.
type aheadEntry struct {
	entry Entry
	found bool
	at    time.Time // when the read began
	seq   uint64    // ends.mark() when the read began
}

// sendEnds remembers the deliveries whose handling ended in this process
// lately, each with a number that grows with every end, so that an entry read
// before an end can tell it is stale. It keeps the ends of two spans of
// readAheadAge, the one under way and the one before, which cover every end
// an entry young enough to stand can have missed.
type sendEnds struct {
	mu        sync.Mutex
	seq       uint64
	cur, prev map[string]uint64
	began     time.Time // of the span cur covers
}

func newSendEnds() *sendEnds { return &sendEnds{cur: map[string]uint64{}} }

// mark is the number of the last end so far; an entry read after mark knows
// of every end up to it.
func (e *sendEnds) mark() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq
}

// ended records, at now, that a handling of the delivery id ended here, once
// whatever it wrote to the ledger is written.
func (e *sendEnds) ended(id string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if now.Sub(e.began) >= readAheadAge {
		e.prev, e.cur, e.began = e.cur, make(map[string]uint64, len(e.cur)), now
	}
	e.seq++
	e.cur[id] = e.seq
}

// since reports whether a handling of the delivery id ended after mark seq.
func (e *sendEnds) since(id string, seq uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur[id] > seq || e.prev[id] > seq
}

// takeAhead gives each of the tasks whose entry was read ahead, and still
// stands at now, that entry as its claim, and returns the others. Every task
// loses its entry read ahead: the next pick of it claims afresh.
func (w *Worker) takeAhead(ts []*task, now time.Time) (rest []*task) {
	for _, t := range ts {
		a := t.ahead
		t.ahead = nil
		if w.stands(a, t.id, now) {
			t.entry, t.found = a.entry, a.found
			continue
		}
		rest = append(rest, t)
	}
	return rest
}

// stands reports whether a, the entry of the delivery id read ahead, may
// stand for one read at now.
func (w *Worker) stands(a *aheadEntry, id string, now time.Time) bool {
	return a != nil && now.Sub(a.at) < readAheadAge && !w.ends.since(id, a.seq)
}
