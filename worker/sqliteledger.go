package worker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// maxSentBatch bounds how many accepted sends one ledger transaction records.
const maxSentBatch = 128

// A group commit waits for the sends that are accepted right after its first:
// it commits once none came for groupGap, or groupWait after it began. The
// sends let their slots go before they are recorded (see Worker.deliver), so
// the wait costs a send nothing but that much later an acknowledgement, and
// saves a transaction for every send it gathers.
const (
	groupGap  = 250 * time.Microsecond
	groupWait = time.Millisecond
)

// SQLiteLedger is the Ledger in the control process's SQLite store: the
// deliveries table is the ledger itself, so run history and health follow
// each write at once. It serves the consumers of one process only.
type SQLiteLedger struct {
	st       *store.Store
	clock    clock.Clock
	recorded func(ids []string) // told of the deliveries every write made final

	// Accepted sends are recorded in group commits: the sends that finish
	// while a group gathers or commits go together, so that the single
	// SQLite writer is not one transaction per message. The first caller
	// that finds no commit running gathers and commits for everyone waiting.
	mu         sync.Mutex
	waiting    []sentReq
	committing bool
	arrived    chan struct{} // a send joined the gathering group
}

type sentReq struct {
	mark  store.SentMark
	reply chan sentResult // buffered: the committer never blocks on it
}

type sentResult struct {
	changed bool
	err     error
}

// NewSQLiteLedger returns the ledger kept in st. c stamps its writes and times
// a group commit's gathering (nil: the real clock); recorded, when set, is told
// after each write of final states, which may have settled runs, of the
// deliveries it made final.
func NewSQLiteLedger(st *store.Store, c clock.Clock, recorded func(ids []string)) *SQLiteLedger {
	if recorded == nil {
		recorded = func([]string) {}
	}
	return &SQLiteLedger{st: st, clock: clock.Or(c), recorded: recorded, arrived: make(chan struct{}, 1)}
}

// Claim reads the entries of the deliveries in one query. A delivery has no
// claim of its own here: one process sends, and its consumers keep a copy of
// a message from being handled twice at once.
func (l *SQLiteLedger) Claim(ctx context.Context, ids []string) (map[string]Entry, error) {
	return l.Entries(ctx, ids)
}

// Entries reads the entries of the deliveries in one query, as Claim does:
// the worker reads the entries of waiting messages ahead of their claims.
func (l *SQLiteLedger) Entries(ctx context.Context, ids []string) (map[string]Entry, error) {
	rows, err := l.st.LedgerEntries(ctx, ids...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Entry, len(rows))
	for id, e := range rows {
		out[id] = Entry{State: e.State, Attempts: e.Attempts, LastError: e.LastError}
	}
	return out, nil
}

// Sent records an accepted send in the next group commit.
func (l *SQLiteLedger) Sent(ctx context.Context, id, providerID string) (bool, error) {
	req := sentReq{mark: store.SentMark{ID: id, ProviderID: providerID}, reply: make(chan sentResult, 1)}
	l.mu.Lock()
	l.waiting = append(l.waiting, req)
	if l.committing {
		signal(l.arrived)
	} else {
		l.committing = true
		l.mu.Unlock()
		l.gather()
		l.mu.Lock()
		for len(l.waiting) > 0 {
			n := min(len(l.waiting), maxSentBatch)
			batch := l.waiting[:n:n]
			l.waiting = l.waiting[n:]
			l.mu.Unlock()
			l.commit(batch)
			l.mu.Lock()
		}
		l.committing = false
	}
	l.mu.Unlock()
	select {
	case res := <-req.reply:
		return res.changed, res.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// gather returns once no send joined the group for groupGap, groupWait after
// it began, or once the group is full.
func (l *SQLiteLedger) gather() {
	gap, end := l.clock.NewTimer(groupGap), l.clock.NewTimer(groupWait)
	defer gap.Stop()
	defer end.Stop()
	for {
		select {
		case <-gap.C():
			return
		case <-end.C():
			return
		case <-l.arrived:
			l.mu.Lock()
			full := len(l.waiting) >= maxSentBatch
			l.mu.Unlock()
			if full {
				return
			}
			gap.Reset(groupGap)
		}
	}
}

func (l *SQLiteLedger) commit(batch []sentReq) {
	marks := make([]store.SentMark, len(batch))
	for i, req := range batch {
		marks[i] = req.mark
	}
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	changed, err := l.st.MarkSentBatch(ctx, marks, l.clock.Now())
	if err == nil {
		ids := make([]string, len(marks))
		for i, m := range marks {
			ids[i] = m.ID
		}
		l.recorded(ids)
	}
	for i, req := range batch {
		res := sentResult{err: err}
		if err == nil {
			res.changed = changed[i]
		}
		req.reply <- res
	}
}

// Attempt records a failed send.
func (l *SQLiteLedger) Attempt(ctx context.Context, id, errText string) (int, error) {
	n, err := l.st.RecordAttempt(ctx, id, errText, l.clock.Now())
	switch {
	case errors.Is(err, store.ErrFinal):
		return n, ErrFinal
	case errors.Is(err, store.ErrNotFound):
		return n, ErrUnknown
	}
	return n, err
}

// Failed gives up on a delivery.
func (l *SQLiteLedger) Failed(ctx context.Context, id, reason string) (bool, error) {
	changed, err := l.st.MarkFailed(ctx, id, reason, l.clock.Now())
	if errors.Is(err, store.ErrNotFound) {
		return false, ErrUnknown
	}
	if err == nil {
		l.recorded([]string{id})
	}
	return changed, err
}
