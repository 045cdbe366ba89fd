package worker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
)

// publishTimeout bounds the wait for JetStream's acknowledgements of one
// batch, longer than a leader election of a replicated stream takes; rows
// whose publish is not acknowledged stay for the next sweep. A publish lost
// to a server that restarted JetStream is never acknowledged.
const publishTimeout = 10 * time.Second

// envelopeHeadroom is what the largest envelope leaves of the server's
// payload limit, for the message's headers.
const envelopeHeadroom = 4 << 10

// Relay is the control process's side of delivery: it publishes the store's
// outbox as self-contained messages, publishes again what the stream lost,
// and, when the senders keep their ledger in JetStream, records the outcomes
// they report in the store's run history.
type Relay struct {
	st       *store.Store
	atRest   *secret.Box // opens channel secrets as the store keeps them
	delivery *secret.Box // seals them for the senders
	files    filePutter
	js       jetstream.JetStream
	cfg      Config
	log      *slog.Logger
	clock    clock.Clock
	sweep    <-chan time.Time
	wake     chan struct{}
	recorded func()
	flights  *flights    // what each owner has published and not yet final
	ready    atomic.Bool // Run has set up the streams
	// kvLedger, with the JetStream ledger, is where CallOff fails what it
	// calls off; set by Run.
	kvLedger atomic.Pointer[KVLedger]
	// failing is set while the relay's passes fail.
	failing atomic.Pointer[publishFailing]

	// onRelayIdle, a test hook, is told when the relay has emptied the outbox and waits.
	onRelayIdle func()
}

// NewRelay returns the relay of the deliveries in st. atRest opens the
// channels' secrets (nil when none are sealed); delivery seals them for the
// senders with the key they share; files stores the attachments.
func NewRelay(st *store.Store, js jetstream.JetStream, files *Files, atRest, delivery *secret.Box, cfg Config, opt Options) (*Relay, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Relay{st: st, atRest: atRest, delivery: delivery, files: files, js: js, cfg: cfg, log: opt.logger(),
		clock: opt.clock(), sweep: opt.Sweep, wake: make(chan struct{}, 1), recorded: opt.recorded(), flights: newFlights(cfg.MaxInFlightPerOwner)}
	if opt.Registerer != nil {
		if err := opt.Registerer.Register(&outboxCollector{r: r, depth: prometheus.NewDesc("herald_worker_outbox_depth",
			"Deliveries written by runs and not yet published to JetStream.", nil, nil)}); err != nil {
			return nil, fmt.Errorf("worker: register metrics: %w", err)
		}
	}
	return r, nil
}

// Notify wakes the relay to publish the outbox now; the engine calls it after
// a handover. It never blocks.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Check reports whether Run has set up the delivery stream and whether it
// can be reached.
func (r *Relay) Check(ctx context.Context) error {
	if !r.ready.Load() {
		return errNotSetUp
	}
	if f := r.failing.Load(); f != nil {
		return *f
	}
	_, err := r.js.Stream(ctx, r.cfg.Stream)
	return err
}

// publishFailing is what Check says while the relay's publishes fail.
type publishFailing struct {
	since time.Time
	err   error
}

func (f publishFailing) Error() string {
	return fmt.Sprintf("the outbox does not drain: publishing fails since %s: %v", f.since.UTC().Format(time.RFC3339), f.err)
}

// note records how a pass of the relay ended: a failure is kept, from its
// first, until a pass succeeds.
func (r *Relay) note(err error) {
	if err == nil {
		r.failing.Store(nil)
		return
	}
	if r.failing.Load() == nil {
		r.failing.Store(&publishFailing{since: r.clock.Now(), err: err})
	}
}

// Run creates the delivery stream if needed, then relays the outbox,
// reconciles, and records the senders' outcomes (with the JetStream ledger)
// until ctx ends. Call it once.
func (r *Relay) Run(ctx context.Context) error {
	if _, err := ensureStream(ctx, r.log, r.js, r.cfg); err != nil {
		return err
	}
	var results jetstream.Consumer
	if r.cfg.Ledger == LedgerJetStream {
		var err error
		if results, err = ensureResults(ctx, r.log, r.js, r.cfg); err != nil {
			return err
		}
		l, err := NewKVLedger(ctx, r.js, KVLedgerConfig{Results: r.cfg.ResultsStream, Replicas: r.cfg.Replicas,
			TTL: r.cfg.Keep(), Owner: "relay-" + rand.Text(), Lease: r.cfg.AckWait, Clock: r.clock, Logger: r.log})
		if err != nil {
			return err
		}
		r.kvLedger.Store(l)
	}
	if err := r.loadFlights(ctx); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	r.ready.Store(true)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 3)
	n := 2
	go func() { r.relay(ctx); done <- nil }()
	go func() { r.reconcileLoop(ctx); done <- nil }()
	if results != nil {
		n++
		go func() { done <- r.recordResults(ctx, results) }()
	}
	var errs []error
	for range n {
		if err := <-done; err != nil {
			errs = append(errs, err)
			cancel()
		}
	}
	return errors.Join(errs...)
}

// relayRetryFirst is how long the relay waits to publish again after a
// failed round; the wait doubles after each failed round, up to
// relayRetryMax (or the sweep interval, if shorter).
const (
	relayRetryFirst = 100 * time.Millisecond
	relayRetryMax   = time.Second
)

// relay publishes the outbox at start, on Notify and on every sweep, until
// ctx ends. After a failed round (the store fenced while the control lease
// is elected again, JetStream without a leader) it tries again soon, rather
// than at the next sweep: nothing else may wake it while the outbox waits.
func (r *Relay) relay(ctx context.Context) {
	sweep := r.sweep
	if sweep == nil {
		t := r.clock.NewTicker(r.cfg.SweepInterval)
		defer t.Stop()
		sweep = t.C()
	}
	retry := relayRetryFirst
	for {
		var again <-chan time.Time
		if err := r.publishOutbox(ctx); ctx.Err() == nil {
			r.note(err)
			if err != nil {
				r.log.Warn("relay outbox", "err", err, "again_in", retry)
				again = r.clock.After(retry)
				retry = min(2*retry, relayRetryMax, r.cfg.SweepInterval)
			} else {
				retry = relayRetryFirst
			}
		}
		if r.onRelayIdle != nil {
			r.onRelayIdle()
		}
		select {
		case <-ctx.Done():
			return
		case <-again:
		case <-r.wake:
		case <-sweep:
			if err := r.checkFlights(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("check the deliveries in flight", "err", err)
			}
		}
	}
}

// publishOutbox publishes the outbox rows that the owners' room in flight
// lets go (see flights), batch by batch, and deletes the rows JetStream
// acknowledged. The delivery id is the message id, so a row published twice
// (the delete lost to a crash) is stored once.
func (r *Relay) publishOutbox(ctx context.Context) error {
	for more := true; more && ctx.Err() == nil; {
		var items []store.OutboxItem
		var err error
		items, more, err = r.nextItems(ctx)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		// In flight before they are published: a send may settle before
		// JetStream's acknowledgement of the publish comes back here.
		r.flights.add(items)
		done, published, perr := r.publishBatch(ctx, items)
		if gone := unpublished(items, published); len(gone) > 0 {
			r.flights.forget(gone)
			more = true // their room is free again
		}
		if len(done) > 0 {
			if err := r.st.DeleteOutbox(context.WithoutCancel(ctx), done...); err != nil {
				return err
			}
		}
		if perr != nil {
			return perr
		}
	}
	return nil
}

// unpublished is the items not among published, which is a subsequence of items.
func unpublished(items, published []store.OutboxItem) []string {
	var out []string
	j := 0
	for _, it := range items {
		if j < len(published) && published[j].DeliveryID == it.DeliveryID {
			j++
			continue
		}
		out = append(out, it.DeliveryID)
	}
	return out
}

// publishBatch seals the rows' envelopes and publishes them asynchronously,
// and returns the ids of the rows done, with the rows JetStream acknowledged
// among them, and the first error. A delivery that cannot be sealed for good
// is failed in the store, and a delivery that no longer exists or is settled
// is dropped; both count as done.
func (r *Relay) publishBatch(ctx context.Context, items []store.OutboxItem) (done []string, acked []store.OutboxItem, _ error) {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.DeliveryID
	}
	outgoing, err := r.st.OutgoingDeliveries(ctx, ids...)
	if err != nil {
		return nil, nil, err
	}
	done = make([]string, 0, len(items))
	futures := make([]jetstream.PubAckFuture, 0, len(items))
	published := make([]store.OutboxItem, 0, len(items))
	var firstErr error
	for _, it := range items {
		d, ok := outgoing[it.DeliveryID]
		if !ok || d.State != store.DeliveryPending {
			done = append(done, it.DeliveryID) // its run was deleted, or it is settled
			continue
		}
		data, err := r.envelope(ctx, d)
		if errors.Is(err, errUndeliverable) {
			if err = r.undeliverable(ctx, d.ID, err); err == nil {
				done = append(done, it.DeliveryID)
				continue
			}
		}
		if err == nil {
			var f jetstream.PubAckFuture
			f, err = r.js.PublishMsgAsync(deliveryMsg(it.Kind, it.DeliveryID, data), jetstream.WithExpectStream(r.cfg.Stream))
			if err == nil {
				futures = append(futures, f)
				published = append(published, it)
				continue
			}
		}
		firstErr = fmt.Errorf("publish %s: %w", it.DeliveryID, err)
		break
	}
	ok, err := r.awaitAcks(ctx, futures)
	for i, it := range published {
		if ok[i] {
			done = append(done, it.DeliveryID)
			acked = append(acked, it)
		}
	}
	if firstErr == nil {
		firstErr = err
	}
	return done, acked, firstErr
}

// publishRound is how long the relay waits for the acknowledgements of its
// publishes before it publishes again those still unanswered. A publish
// that reached a stream leader which then died is never answered; the same
// message published again reaches the leader elected since, which stores it
// once (the delivery id is its message id), so the relay need not wait out
// publishTimeout, in which time the senders would run dry.
const publishRound = time.Second

// errNoAck is awaitAcks' answer when publishes are still unanswered once
// publishTimeout has passed.
var errNoAck = fmt.Errorf("publish: no acknowledgement within %v", publishTimeout)

// awaitAcks waits for JetStream's acknowledgement of each publish, for up to
// publishTimeout, publishing again every publishRound what is still
// unanswered or was turned away for now (see unanswered); both waits are the
// relay's clock's. ok[i] reports whether futures[i]'s message was stored;
// err is the first publish that failed for good, or the timeout.
func (r *Relay) awaitAcks(ctx context.Context, futures []jetstream.PubAckFuture) (ok []bool, err error) {
	ok = make([]bool, len(futures))
	expiry := r.clock.NewTimer(publishTimeout)
	defer expiry.Stop()
	pending := make([]int, len(futures))
	for i := range futures {
		pending[i] = i
	}
	for len(pending) > 0 {
		again, failed, rerr := r.awaitRound(ctx, futures, pending, ok, expiry.C())
		if err == nil {
			err = failed
		}
		switch {
		case errors.Is(rerr, errNoAck):
			return ok, errors.Join(err, rerr)
		case rerr != nil:
			return ok, rerr
		}
		pending = pending[:0]
		for _, i := range again {
			f, perr := r.js.PublishMsgAsync(futures[i].Msg(), jetstream.WithExpectStream(r.cfg.Stream))
			if perr != nil {
				return ok, errors.Join(err, fmt.Errorf("publish again: %w", perr))
			}
			futures[i] = f
			pending = append(pending, i)
		}
	}
	return ok, err
}

// awaitRound waits up to publishRound for the answers to the pending
// publishes, marking the stored ones in ok, and returns those to publish
// again: unanswered within the round, or turned away for now. It lasts the
// round whenever some are to be published again, so that a stream without a
// leader is not asked again at once. failed is the first publish refused for
// good; err is errNoAck once expired fires, or ctx's.
func (r *Relay) awaitRound(ctx context.Context, futures []jetstream.PubAckFuture, pending []int, ok []bool, expired <-chan time.Time) (again []int, failed, err error) {
	round := r.clock.NewTimer(publishRound)
	defer round.Stop()
	for k, i := range pending {
		select {
		case <-futures[i].Ok():
			ok[i] = true
		case perr := <-futures[i].Err():
			if unanswered(perr) || errors.Is(perr, jetstream.ErrAsyncPublishTimeout) {
				again = append(again, i)
			} else if failed == nil {
				failed = fmt.Errorf("publish %s: %w", futures[i].Msg().Header.Get(jetstream.MsgIDHeader), perr)
			}
		case <-round.C():
			return append(again, pending[k:]...), failed, nil
		case <-expired:
			return nil, failed, errNoAck
		case <-ctx.Done():
			return nil, failed, ctx.Err()
		}
	}
	if len(again) > 0 {
		select {
		case <-round.C():
		case <-expired:
			return nil, failed, errNoAck
		case <-ctx.Done():
			return nil, failed, ctx.Err()
		}
	}
	return again, failed, nil
}

// envelope seals one delivery's message within the server's payload limit.
func (r *Relay) envelope(ctx context.Context, d store.Outgoing) ([]byte, error) {
	limit := int(r.js.Conn().MaxPayload()) - envelopeHeadroom
	return seal(ctx, d, r.atRest, r.delivery, r.files, limit)
}

// undeliverable fails a delivery no sender could send.
func (r *Relay) undeliverable(ctx context.Context, id string, reason error) error {
	if _, err := r.st.MarkFailed(context.WithoutCancel(ctx), id, reason.Error(), r.clock.Now()); err != nil {
		return fmt.Errorf("record failed delivery %s: %w", id, err)
	}
	r.log.Warn("delivery failed", "delivery", id, "reason", reason)
	r.recorded()
	return nil
}

// deliveryMsg is the message of one delivery, its id the message id.
func deliveryMsg(kind, id string, data []byte) *nats.Msg {
	m := nats.NewMsg(deliverySubject(kind, id))
	m.Data = data
	m.Header.Set(jetstream.MsgIDHeader, id)
	return m
}

// outboxCollector reads the outbox depth at each scrape.
type outboxCollector struct {
	r     *Relay
	depth *prometheus.Desc
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth }

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if n, err := c.r.st.OutboxDepth(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(n))
	}
}
