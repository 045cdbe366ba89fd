package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// deliver settles one claimed task: from its ledger entry, or by sending it
// and recording the outcome. Once the send starts, stop no longer cuts it:
// the send is bounded by the send timeout and the ledger write that follows
// is always made. outcomeHeld leaves the task in the pool, waiting again.
func (w *Worker) deliver(stop context.Context, k *kind, t *task) outcome {
	msg, id, d := t.msg, t.id, t.entry
	ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), ledgerTimeout)
	defer cancel()
	switch {
	case !t.found:
		w.log.Warn("delivery not found; its run was deleted", "delivery", id)
		return w.settle(msg.Term(), id, outcomeDropped)
	case d.State != store.DeliveryPending:
		return w.settle(msg.Ack(), id, outcomeSkipped)
	case d.Attempts >= w.cfg.MaxAttempts:
		return w.fail(ctx, msg, id, fmt.Sprintf("gave up after %d attempts: %s", d.Attempts, d.LastError))
	case w.tooOld(msg):
		return w.fail(ctx, msg, id, fmt.Sprintf("the %s provider could not be reached for %s", k.kind, w.cfg.MaxWait))
	}
	m, err := t.env.open(ctx, w.delivery, w.files)
	switch {
	case errors.Is(err, errUndeliverable):
		return w.fail(ctx, msg, id, err.Error())
	case err != nil:
		return w.failedAttempt(ctx, msg, id, err)
	}
	sendCtx, cancelSend := context.WithTimeout(context.WithoutCancel(stop), w.cfg.SendTimeout)
	began := time.Now()
	providerID, sendErr := k.sender.Send(sendCtx, m)
	cancelSend()
	w.metrics.sent(string(k.kind), time.Since(began), sendErr)
	switch held, calledOff := w.held(k, t, sendErr); {
	case calledOff:
		w.log.Info("delivery called off", "delivery", id)
		return w.settle(msg.Term(), id, outcomeDropped)
	case held:
		return outcomeHeld
	}
	if sendErr != nil {
		ctx, cancel = context.WithTimeout(context.WithoutCancel(stop), ledgerTimeout)
		defer cancel()
		return w.failedAttempt(ctx, msg, id, sendErr)
	}
	// The send's slot goes to the next message while the ledger records
	// this one, so that the ledger can record many in one commit without
	// idling the slots; but no more than maxUnrecordedPerSlot per slot wait
	// so: a ledger that cannot write holds the slots of the sends after
	// those, and the kind stops sending.
	if k.unrecorded.Add(1) <= int64(maxUnrecordedPerSlot*k.cfg.Concurrency) {
		k.pool.accepted(t)
	}
	defer k.unrecorded.Add(-1)
	return w.sent(stop, msg, id, providerID)
}

// maxUnrecordedPerSlot is how many accepted sends per send slot may await
// their record in the ledger with their slot let go (see deliver). Beyond
// them a send keeps its slot until recorded, so that a crash leaves at most
// 1+maxUnrecordedPerSlot accepted, unrecorded sends per slot.
const maxUnrecordedPerSlot = 2

// held records a send's result with its destination's breaker and reports
// whether the task waits again, charged nothing: its destination took nothing,
// or is held. calledOff reports that it would, but was called off meanwhile:
// it is to be dropped.
func (w *Worker) held(k *kind, t *task, sendErr error) (held, calledOff bool) {
	probe := t.probe
	held, calledOff, change := k.pool.result(w.clock.Now(), t, classify(sendErr), sendErr)
	dest := t.destName
	switch {
	case change == changeHeld:
		w.log.Warn("destination unavailable; holding its deliveries", "kind", k.kind, "destination", dest,
			"delivery", t.id, "err", sendErr)
	case change == changeReleased:
		w.log.Info("destination takes deliveries again", "kind", k.kind, "destination", dest)
	case held && probe:
		w.log.Debug("destination still unavailable", "kind", k.kind, "destination", dest, "err", sendErr)
	}
	return held, calledOff
}

// tooOld reports whether msg was published longer than Config.MaxWait ago.
func (w *Worker) tooOld(msg jetstream.Msg) bool {
	md, err := msg.Metadata()
	return err == nil && time.Since(md.Timestamp) > w.cfg.MaxWait
}

// sent records an accepted send and acknowledges the message. A ledger that
// cannot record it (a full disk, a store away) is tried again, the message
// kept, until it can or the worker stops: handed back, the message would be
// sent again. A worker that stops first leaves it unacknowledged, as a crash
// would, and its copy goes out again with the same id, which lets the
// receiver recognise it.
func (w *Worker) sent(stop context.Context, msg jetstream.Msg, id, providerID string) outcome {
	var changed bool
	var err error
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), ledgerTimeout)
		changed, err = w.ledger.Sent(ctx, id, providerID)
		cancel()
		if err == nil || errors.Is(err, ErrUnknown) {
			break
		}
		w.log.Error("record sent delivery; trying again", "delivery", id, "provider_id", providerID, "try", try, "err", err)
		if stop.Err() != nil {
			return w.settle(nil, id, outcomeReturned)
		}
		w.pause(stop, backoff(try, w.cfg.BackoffBase, w.cfg.BackoffCap, w.rnd))
	}
	if errors.Is(err, ErrUnknown) {
		w.log.Warn("delivery sent, but the ledger no longer has it", "delivery", id, "provider_id", providerID)
		return w.settle(msg.Term(), id, outcomeDropped)
	}
	if !changed {
		w.log.Warn("delivery settled elsewhere while it was sent here", "delivery", id, "provider_id", providerID)
	}
	w.log.Debug("delivery sent", "delivery", id, "provider_id", providerID)
	return w.settle(msg.Ack(), id, outcomeSent)
}

// failedAttempt records a failed send and retries it later, or gives up when
// the error is permanent or the attempts are used up.
func (w *Worker) failedAttempt(ctx context.Context, msg jetstream.Msg, id string, sendErr error) outcome {
	attempts, err := w.ledger.Attempt(ctx, id, sendErr.Error())
	switch {
	case errors.Is(err, ErrFinal):
		return w.settle(msg.Ack(), id, outcomeSkipped)
	case errors.Is(err, ErrUnknown):
		return w.settle(msg.Term(), id, outcomeDropped)
	case err != nil:
		w.log.Error("record delivery attempt", "delivery", id, "send_err", sendErr, "err", err)
		return w.settle(msg.NakWithDelay(w.cfg.BackoffBase), id, outcomeReturned)
	case channels.IsPermanent(sendErr):
		return w.fail(ctx, msg, id, sendErr.Error())
	case attempts >= w.cfg.MaxAttempts || lastDelivery(msg, w.cfg.MaxAttempts+maxDeliverSlack):
		return w.fail(ctx, msg, id, fmt.Sprintf("gave up after %d attempts: %v", attempts, sendErr))
	}
	delay := backoff(attempts, w.cfg.BackoffBase, w.cfg.BackoffCap, w.rnd)
	if asked, ok := channels.RetryDelay(sendErr); ok {
		delay = max(delay, min(asked, w.cfg.BackoffCap)) // the provider's Retry-After, within the cap
	}
	w.log.Info("delivery failed; will retry", "delivery", id, "attempt", attempts, "retry_in", delay, "err", sendErr)
	return w.settle(msg.NakWithDelay(delay), id, outcomeRetry)
}

// fail marks the delivery failed and terminates the message.
func (w *Worker) fail(ctx context.Context, msg jetstream.Msg, id, reason string) outcome {
	if _, err := w.ledger.Failed(ctx, id, reason); err != nil && !errors.Is(err, ErrUnknown) {
		w.log.Error("record failed delivery", "delivery", id, "reason", reason, "err", err)
		return w.settle(msg.NakWithDelay(w.cfg.BackoffBase), id, outcomeReturned)
	}
	w.log.Warn("delivery failed", "delivery", id, "reason", reason)
	return w.settle(msg.Term(), id, outcomeFailed)
}

// settle logs an acknowledgement that could not be sent and returns o. A
// lost acknowledgement costs a redelivery, which the ledger absorbs.
func (w *Worker) settle(ackErr error, id string, o outcome) outcome {
	if ackErr != nil {
		w.log.Debug("acknowledge delivery", "delivery", id, "err", ackErr)
	}
	return o
}

// lastDelivery reports whether JetStream will not deliver msg again.
func lastDelivery(msg jetstream.Msg, maxDeliver int) bool {
	md, err := msg.Metadata()
	return err == nil && md.NumDelivered >= uint64(maxDeliver)
}
