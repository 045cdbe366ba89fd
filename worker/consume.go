package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/gather"
)

// ledgerTimeout bounds the ledger reads and writes around one send.
const ledgerTimeout = 15 * time.Second

// A pull request lives pullExpiry, and JetStream sends a heartbeat on it
// every pullHeartbeat while it waits. A client that hears nothing for two
// heartbeats takes its request for lost and pulls anew. Now and then, under
// a burst, the client counts a request the server does not hold; with the
// library's defaults (30s and 15s) that stalled a kind for 30s with
// messages waiting. These bound the stall to 2s.
//
// The commonest such stall is the library's own: the iterator decides to
// pull only when Next starts or a message arrives, and it skips the pull
// while it is still sending the previous one. When the messages of that
// previous pull are taken before its sender marks it sent (a goroutine
// descheduled for a moment on a busy machine), the iterator's count falls to
// nothing with no pull made and none to come, and Next waits out the
// heartbeat check. So after each message the puller waits only
// pullRecheck before it calls Next again, which pulls then; the heartbeat
// check still runs on the wait after that.
const (
	pullExpiry    = 5 * time.Second
	pullHeartbeat = time.Second
	pullRecheck   = 50 * time.Millisecond
)

// outcome is what became of one message a consumer handled.
type outcome int

const (
	outcomeSent     outcome = iota // sent now, ledger written, acked
	outcomeSkipped                 // the ledger said sent or failed already: acked, not sent
	outcomeRetry                   // the send failed for a reason that can pass: redelivered after a backoff
	outcomeFailed                  // failed for good: ledger written, terminated
	outcomeDropped                 // the delivery no longer exists: terminated
	outcomeReturned                // handed back unsent (stopping, or the ledger could not be read or written)
	outcomeBusy                    // a copy of the message is being handled here already: left to it
)

func (o outcome) String() string {
	names := [...]string{"sent", "skipped", "retry", "failed", "dropped", "returned", "busy"}
	if o < 0 || int(o) >= len(names) {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return names[o]
}

// task is a message on its way to a send.
type task struct {
	msg   jetstream.Msg
	id    string    // the delivery id
	env   *envelope // the message's body
	at    time.Time // when it was taken from the pull buffer
	entry Entry
	found bool // entry was read; false when the ledger does not know the delivery
}

// consume delivers the kind's messages until ctx ends; then it hands back
// the messages it holds unsent and waits for those in flight. One goroutine
// pulls, and the dispatcher reads the ledger entries of the messages that
// queued up meanwhile in one query and starts a send for each as a send
// slot frees. A message holds its slot until its outcome is in the ledger, so
// that a crash leaves at most one accepted, unrecorded send per slot; the
// ledger writes of the slots go in one transaction.
//
// While a message waits (in the pull buffer, the queue or its batch) and while
// it is sent, heartbeat tells JetStream it is in progress.
func (w *Worker) consume(ctx context.Context, k *kind, c jetstream.Consumer) error {
	it, next, err := messages(c, k.cfg.Concurrency)
	if err != nil {
		return fmt.Errorf("consume %s: %w", k.kind, err)
	}
	queue := make(chan *task, k.cfg.Concurrency)
	var pullErr error
	var puller sync.WaitGroup
	puller.Go(func() { pullErr = w.pull(ctx, k, it, next, queue) })
	stopBeat := make(chan struct{})
	var beater sync.WaitGroup
	beater.Go(func() { w.heartbeat(k, stopBeat) })
	w.dispatch(ctx, k, queue)
	puller.Wait()
	close(stopBeat)
	beater.Wait()
	return pullErr
}

// heartbeat tells JetStream, every third of the ack wait, that the messages the kind
// holds (queued for a send slot, or sending) are in progress, so that a short ack wait
// hands out again only the messages of a process that is gone.
func (w *Worker) heartbeat(k *kind, stop <-chan struct{}) {
	t := time.NewTicker(w.cfg.AckWait / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			k.held.Range(func(key, _ any) bool {
				_ = key.(*task).msg.InProgress()
				return true
			})
		}
	}
}

// pull moves messages from the iterator (next gives them) to queue, which it
// closes when it returns: when ctx ends (handing back what the iterator still
// holds) or the iterator closes.
func (w *Worker) pull(ctx context.Context, k *kind, it jetstream.MessagesContext, next nextFunc, queue chan<- *task) error {
	defer close(queue)
	for {
		msg, err := next(ctx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			handBack(it)
			return nil
		case errors.Is(err, jetstream.ErrMsgIteratorClosed):
			return fmt.Errorf("consume %s: %w", k.kind, err)
		default:
			w.log.Warn("consume", "kind", k.kind, "err", err)
			continue
		}
		t := &task{msg: msg, at: time.Now()}
		if t.env, err = decodeEnvelope(msg); err != nil {
			// A message no sender can read (one of an earlier version carried only the
			// delivery id): the reconciler publishes the delivery again, sealed, once the
			// stream's dedupe window no longer remembers the first message's id.
			w.log.Warn("a delivery message that does not decode; left to the reconciler", "subject", msg.Subject(), "err", err)
			_ = msg.Term()
			continue
		}
		t.id = t.env.ID
		k.held.Store(t, struct{}{})
		select {
		case queue <- t:
		case <-ctx.Done():
			k.held.Delete(t)
			_ = msg.Nak()
			handBack(it)
			return nil
		}
	}
}

// nextFunc returns the next message, waiting for it until ctx ends.
type nextFunc func(ctx context.Context) (jetstream.Msg, error)

// messages starts pulling c's messages, at most held of them here at once, with
// the expiry and heartbeat above, and returns the iterator and the function
// that gives its messages with the recheck after each one (see pullRecheck).
func messages(c jetstream.Consumer, held int) (jetstream.MessagesContext, nextFunc, error) {
	it, err := c.Messages(jetstream.PullMaxMessages(held), jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return nil, nil, err
	}
	return it, rechecking(func(ctx context.Context) (jetstream.Msg, error) { return it.Next(jetstream.NextContext(ctx)) }), nil
}

// rechecking returns a function that returns the next message wait gives (the
// iterator's Next until its context ends). After a message, it first waits
// pullRecheck, then waits again without that bound (see pullRecheck).
func rechecking(wait nextFunc) nextFunc {
	recheck := false // the last wait returned a message
	return func(ctx context.Context) (jetstream.Msg, error) {
		if recheck {
			short, cancel := context.WithTimeout(ctx, pullRecheck)
			msg, err := wait(short)
			cancel()
			if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
				recheck = err == nil
				return msg, err
			}
		}
		msg, err := wait(ctx)
		recheck = err == nil
		return msg, err
	}
}

// handBack stops pulling and gives the messages already pulled but not
// handled back to JetStream, so that they go out again at once rather than
// after the ack wait.
func handBack(it jetstream.MessagesContext) {
	it.Drain()
	for {
		msg, err := it.Next(jetstream.NextMaxWait(time.Second))
		if err != nil {
			break
		}
		_ = msg.Nak()
	}
	it.Stop()
}

// dispatch takes the queued messages batch by batch, reads their ledger
// entries and starts their sends, at most the kind's concurrency at once.
// It returns when queue is closed and every send it started has finished.
func (w *Worker) dispatch(ctx context.Context, k *kind, queue <-chan *task) {
	slots := make(chan struct{}, k.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	batch := make([]*task, 0, k.cfg.Concurrency)
	for first := range queue {
		batch = gather.Ready(queue, append(batch[:0], first), cap(batch))
		err := w.readLedger(ctx, batch)
		for i, t := range batch {
			if err == nil {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			if err != nil {
				w.handBackUnread(ctx, k, batch[i:], err)
				break
			}
			wg.Go(func() {
				defer func() { <-slots }()
				w.handle(ctx, k, t)
			})
		}
	}
}

// readLedger reads the ledger entries of a batch, claiming them for a send here.
func (w *Worker) readLedger(ctx context.Context, batch []*task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ids := make([]string, len(batch))
	for i, t := range batch {
		ids[i] = t.id
	}
	ctx, cancel := context.WithTimeout(ctx, ledgerTimeout)
	defer cancel()
	entries, err := w.ledger.Claim(ctx, ids)
	if err != nil {
		return err
	}
	for _, t := range batch {
		t.entry, t.found = entries[t.id]
	}
	return nil
}

// handBackUnread returns messages that will not be sent now: at once when
// stopping, after a short delay when the ledger could not be read.
func (w *Worker) handBackUnread(ctx context.Context, k *kind, ts []*task, err error) {
	stopping := ctx.Err() != nil
	if !stopping {
		w.log.Error("read ledger", "err", err)
	}
	for _, t := range ts {
		k.held.Delete(t)
		if stopping {
			w.settle(t.msg.Nak(), t.id, outcomeReturned)
		} else {
			w.settle(t.msg.NakWithDelay(w.cfg.BackoffBase), t.id, outcomeReturned)
		}
		w.report(t.id, outcomeReturned)
	}
}

// decodeEnvelope reads a delivery message, whose message id, when it has one,
// must be its delivery id.
func decodeEnvelope(msg jetstream.Msg) (*envelope, error) {
	env := new(envelope)
	if err := json.Unmarshal(msg.Data(), env); err != nil {
		return nil, err
	}
	if id := msg.Headers().Get(jetstream.MsgIDHeader); env.ID == "" || id != "" && id != env.ID {
		return nil, fmt.Errorf("delivery id %q, message id %q", env.ID, id)
	}
	return env, nil
}
