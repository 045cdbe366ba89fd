package worker

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/store"
)

// maxSentBatch bounds how many accepted sends one ledger transaction records.
// A batch is what waits when the previous commit ends: the sends hold their
// slots until recorded, so waiting for more would only idle the slots.
const maxSentBatch = 128

// errLedgerClosed is returned for a send recorded after the recorder stopped.
var errLedgerClosed = errors.New("ledger recorder stopped")

// sentRecorder writes accepted sends to the ledger in group commits: the
// sends that finish while one transaction commits go together in the next,
// so that the single SQLite writer is not one transaction per message.
type sentRecorder struct {
	st       *store.Store
	now      func() time.Time
	recorded func() // told after every batch it wrote
	reqs     chan sentReq
	done     chan struct{}
}

type sentReq struct {
	mark  store.SentMark
	reply chan sentResult // buffered: the recorder never blocks on it
}

type sentResult struct {
	changed bool
	err     error
}

func newSentRecorder(st *store.Store, now func() time.Time, recorded func()) *sentRecorder {
	return &sentRecorder{st: st, now: now, recorded: recorded, reqs: make(chan sentReq), done: make(chan struct{})}
}

// record writes one accepted send and reports whether the delivery was
// pending. ctx bounds the wait for a place in a batch and for its commit.
func (r *sentRecorder) record(ctx context.Context, id, providerID string) (bool, error) {
	req := sentReq{mark: store.SentMark{ID: id, ProviderID: providerID}, reply: make(chan sentResult, 1)}
	select {
	case r.reqs <- req:
	case <-r.done:
		return false, errLedgerClosed
	case <-ctx.Done():
		return false, ctx.Err()
	}
	select {
	case res := <-req.reply:
		return res.changed, res.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// run commits batches until stop is closed and no send waits any more. It
// is stopped after the consumers, whose sends in flight it still records.
func (r *sentRecorder) run(stop <-chan struct{}) {
	defer close(r.done)
	batch := make([]sentReq, 0, maxSentBatch)
	for {
		select {
		case req := <-r.reqs:
			batch = append(batch[:0], req)
		case <-stop:
			return
		}
	gather:
		for len(batch) < maxSentBatch {
			select {
			case req := <-r.reqs:
				batch = append(batch, req)
			default:
				break gather
			}
		}
		r.commit(batch)
	}
}

func (r *sentRecorder) commit(batch []sentReq) {
	marks := make([]store.SentMark, len(batch))
	for i, req := range batch {
		marks[i] = req.mark
	}
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	changed, err := r.st.MarkSentBatch(ctx, marks, r.now())
	if err == nil {
		r.recorded()
	}
	for i, req := range batch {
		res := sentResult{err: err}
		if err == nil {
			res.changed = changed[i]
		}
		req.reply <- res
	}
}
