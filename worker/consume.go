package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/secret"
)

// ledgerTimeout bounds the ledger reads and writes around one send.
const ledgerTimeout = 15 * time.Second

// A fetch asks JetStream for as many messages as the pool has room for and
// lasts at most fetchExpiry, during which JetStream sends a heartbeat every
// fetchHeartbeat while it has nothing to send; a fetch that hears nothing for
// two heartbeats was lost (its server went away) and the next one is made.
// The messages of a fetch arrive as they are published, so a fetch that waits
// costs no latency.
const (
	fetchExpiry    = 5 * time.Second
	fetchHeartbeat = time.Second
	// fetchPause is the wait after a fetch that failed, before the next.
	fetchPause = 250 * time.Millisecond
)

// maxHeldBytes bounds the messages one kind's consumer holds, beside the
// count (KindConfig.MaxPending): a message may carry its HTML, up to the
// server's payload limit.
const maxHeldBytes = 64 << 20

// outcome is what became of one message a consumer handled.
type outcome int

const (
	outcomeSent     outcome = iota // sent now, ledger written, acked
	outcomeSkipped                 // the ledger said sent or failed already: acked, not sent
	outcomeRetry                   // the send failed for a reason that can pass: redelivered after a backoff
	outcomeFailed                  // failed for good: ledger written, terminated
	outcomeDropped                 // the delivery no longer exists, or was called off: terminated
	outcomeReturned                // handed back unsent (stopping)
	outcomeBusy                    // a copy of the message is being handled here or elsewhere: left to it
	outcomeHeld                    // its destination takes nothing for now: waits again, charged nothing
)

func (o outcome) String() string {
	names := [...]string{"sent", "skipped", "retry", "failed", "dropped", "returned", "busy", "held"}
	if o < 0 || int(o) >= len(names) {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return names[o]
}

// task is a message held by a kind's consumer, from its fetch until it is settled.
type task struct {
	msg      jetstream.Msg
	id       string    // the delivery id
	env      *envelope // the message's body
	size     int       // of the message's data
	owner    string    // whose delivery it is
	destName string    // where it goes (see dest)

	// Guarded by the pool's lock.
	dest      *dest
	probe     bool      // picked as the probe of its held destination
	touched   time.Time // when JetStream was last told it is in progress
	notBefore time.Time // not picked before (a copy claimed elsewhere)
	calledOff bool      // called off while it was being sent (see pool.callOff)
	slotFreed bool      // its send was accepted and its slot let go (see pool.accepted)

	entry   Entry // read when it was last claimed
	found   bool  // the ledger knows the delivery
	claimed bool  // claimed before (and held for its destination since)

	// Read and written by the dispatcher alone.
	ahead *aheadEntry // its entry read ahead of its claim (see readAhead)
}

// consume delivers the kind's messages until ctx ends. One goroutine fetches
// as many messages as the pool has room for, one tells JetStream that every
// message held is in progress, and the dispatcher starts a send for each
// message the pool lets go as a send slot frees, claiming it in the ledger as
// it takes the slot. Once ctx ends it hands back the waiting messages and
// waits for the sends in flight.
func (w *Worker) consume(ctx context.Context, k *kind, c jetstream.Consumer) error {
	var fetchErr error
	var wg sync.WaitGroup
	wg.Go(func() { fetchErr = w.fetch(ctx, k, c) })
	stopBeat := make(chan struct{})
	var beater sync.WaitGroup
	beater.Go(func() { w.heartbeat(k, stopBeat) })
	w.dispatch(ctx, k)
	wg.Wait()
	close(stopBeat)
	beater.Wait()
	for _, t := range k.pool.take(nil) { // fetched while the dispatcher stopped
		w.settle(handBack(t.msg), t.id, outcomeReturned)
	}
	w.flush()
	return fetchErr
}

// fetch moves messages from JetStream into the kind's pool, as many as it has
// room for, until ctx ends.
func (w *Worker) fetch(ctx context.Context, k *kind, c jetstream.Consumer) error {
	maxPayload := int64(w.js.Conn().MaxPayload())
	for ctx.Err() == nil {
		n, bytes := k.pool.room(k.cfg.MaxPending, maxHeldBytes)
		if n <= 0 || bytes < maxPayload {
			select {
			case <-k.pool.freed:
			case <-ctx.Done():
			}
			continue
		}
		if err := w.fetchOnce(ctx, k, c, n, int(bytes)); err != nil {
			if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
				return fmt.Errorf("consume %s: %w", k.kind, err)
			}
			w.log.Warn("fetch deliveries", "kind", k.kind, "err", err)
			w.pause(ctx, fetchPause)
		}
	}
	return nil
}

// fetchOnce makes one fetch of up to n messages and bytes and adds each to the
// pool as it arrives.
func (w *Worker) fetchOnce(ctx context.Context, k *kind, c jetstream.Consumer, n, bytes int) error {
	fctx, cancel := context.WithTimeout(ctx, fetchExpiry)
	defer cancel()
	batch, err := c.Fetch(n, jetstream.FetchContext(fctx), jetstream.FetchMaxBytes(bytes),
		jetstream.FetchHeartbeat(fetchHeartbeat))
	if err != nil {
		return err
	}
	for msg := range batch.Messages() {
		if ctx.Err() != nil {
			w.settle(handBack(msg), "", outcomeReturned)
			continue
		}
		if t := w.taskOf(k, msg); t != nil {
			k.pool.add(t)
		}
	}
	switch err := batch.Error(); {
	case err == nil, ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, jetstream.ErrNoMessages), errors.Is(err, jetstream.ErrMaxBytesExceeded):
		return nil
	default:
		return err
	}
}

// taskOf reads a fetched message. A message no sender can read (one of an
// earlier version carried only the delivery id) is terminated: the reconciler
// publishes the delivery again, sealed, once the stream's dedupe window no
// longer remembers the first message's id.
func (w *Worker) taskOf(k *kind, msg jetstream.Msg) *task {
	env, err := decodeEnvelope(msg)
	if err != nil {
		w.log.Warn("a delivery message that does not decode; left to the reconciler", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return nil
	}
	return &task{msg: msg, id: env.ID, env: env, size: len(msg.Data()), owner: env.Owner, touched: w.clock.Now(),
		destName: destination(k.sender, env, w.delivery)}
}

// destination names where env goes: the sender's name for it when its
// channels name providers of their own, else "" (one per kind).
func destination(s channels.Sender, env *envelope, delivery *secret.Box) string {
	d, ok := s.(interface{ Destination(channels.Channel) string })
	if !ok {
		return ""
	}
	c := channels.Channel{ID: env.Channel.ID, Kind: channels.Kind(env.Channel.Kind), Config: env.Channel.Config}
	if len(env.Secret) > 0 && delivery != nil {
		if plain, err := delivery.Open(env.Secret, []byte(env.ID)); err == nil {
			c.Secret = string(plain)
		}
	}
	return d.Destination(c)
}

// heartbeat tells JetStream, every third of the ack wait, that the messages the
// kind holds are in progress, so that the ack wait hands out again only the
// messages of a process that is gone; and renews the ledger's claims of the
// sends that take that long.
func (w *Worker) heartbeat(k *kind, stop <-chan struct{}) {
	every := w.cfg.AckWait / 3
	t := w.clock.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C():
			now := w.clock.Now()
			stale := k.pool.stale(now.Add(-every), now)
			for _, t := range stale {
				_ = t.msg.InProgress()
			}
			w.renew(stale)
			if w.onHeartbeat != nil {
				w.onHeartbeat()
			}
		}
	}
}

// renew extends the ledger's claims of the tasks that have one, when the
// ledger's claims lapse.
func (w *Worker) renew(ts []*task) {
	r, ok := w.ledger.(interface {
		Renew(ctx context.Context, ids []string) error
	})
	if !ok {
		return
	}
	var ids []string
	for _, t := range ts {
		if _, claimed := w.running.Load(t.id); claimed {
			ids = append(ids, t.id)
		}
	}
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.AckWait/3)
	defer cancel()
	if err := r.Renew(ctx, ids); err != nil {
		w.log.Warn("renew delivery claims", "deliveries", len(ids), "err", err)
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

// pause waits d or until ctx ends.
func (w *Worker) pause(ctx context.Context, d time.Duration) { clock.Sleep(ctx, w.clock, d) }
