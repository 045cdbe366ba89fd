package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// handle delivers one message unless a copy of it is being handled here.
func (w *Worker) handle(stop context.Context, k *kind, t *task) {
	defer k.held.Delete(t)
	o := outcomeBusy
	if _, busy := w.running.LoadOrStore(t.id, struct{}{}); !busy {
		o = w.deliver(stop, k, t)
		w.running.Delete(t.id)
	}
	w.metrics.handled.WithLabelValues(string(k.kind), o.String()).Inc()
	w.report(t.id, o)
}

// report tells the test hook what became of a message.
func (w *Worker) report(id string, o outcome) {
	if w.onSettle != nil {
		w.onSettle(id, o)
	}
}

// deliver checks the ledger entry, sends and records the outcome. Once the
// send starts, stop no longer cuts it: the send is bounded by the send
// timeout and the ledger write that follows is always made. The message
// holds its send slot until its outcome is in the ledger, so that a crash
// finds at most one accepted, unrecorded send per slot (the ledger writes of
// the slots still go in one transaction).
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
	}
	m, err := t.env.open(ctx, w.delivery, w.files)
	switch {
	case errors.Is(err, errUndeliverable):
		return w.fail(ctx, msg, id, err.Error())
	case err != nil:
		return w.failedAttempt(ctx, msg, id, err)
	}
	if time.Since(t.at) > w.cfg.AckWait/4 {
		_ = msg.InProgress() // it waited long for its slot
	}
	providerID, sendErr, err := w.send(stop, k, t, m)
	if err != nil {
		// Not sent: hand it back rather than hold the stop up.
		return w.settle(msg.Nak(), id, outcomeReturned)
	}
	if sendErr == errTooOld {
		return w.fail(ctx, msg, id, fmt.Sprintf("the %s provider could not be reached for %s", k.kind, w.cfg.MaxWait))
	}
	ctx, cancel = context.WithTimeout(context.WithoutCancel(stop), ledgerTimeout)
	defer cancel()
	if sendErr != nil {
		return w.failedAttempt(ctx, msg, id, sendErr)
	}
	return w.sent(ctx, msg, id, providerID)
}

// errTooOld is send's answer for a delivery that waited Config.MaxWait for its provider.
var errTooOld = errors.New("waited too long for the provider")

// send sends m once the kind's rate limit and breaker let it, and returns the
// provider's id and the send's error. While the provider cannot be reached, the send
// waits in its slot and tries again as the breaker's probes allow, and that costs no
// attempt; a delivery older than Config.MaxWait gets errTooOld. err is stop's when the
// worker stops before the send went.
func (w *Worker) send(stop context.Context, k *kind, t *task, m channels.Message) (providerID string, sendErr, err error) {
	for {
		if err := k.wait(stop, t.msg, w.cfg.AckWait); err != nil || stop.Err() != nil {
			return "", nil, cmp.Or(err, stop.Err())
		}
		probe, err := k.breaker.acquire(stop)
		if err != nil {
			return "", nil, err
		}
		if md, err := t.msg.Metadata(); err == nil && time.Since(md.Timestamp) > w.cfg.MaxWait {
			k.breaker.done(probe, false)
			return "", errTooOld, nil
		}
		sendCtx, cancelSend := context.WithTimeout(context.WithoutCancel(stop), w.cfg.SendTimeout)
		began := time.Now()
		providerID, sendErr = k.sender.Send(sendCtx, m)
		w.metrics.sent(string(k.kind), time.Since(began), sendErr)
		cancelSend()
		down := unreachable(sendErr)
		if down && !k.breaker.isOpen() {
			w.log.Warn("provider unreachable; holding the kind's sends", "kind", k.kind, "delivery", t.id, "err", sendErr)
		}
		k.breaker.done(probe, down)
		if !down {
			if probe {
				w.log.Info("provider reachable again", "kind", k.kind)
			}
			return providerID, sendErr, nil
		}
	}
}

// sent records an accepted send and acknowledges the message.
func (w *Worker) sent(ctx context.Context, msg jetstream.Msg, id, providerID string) outcome {
	changed, err := w.ledger.Sent(ctx, id, providerID)
	if errors.Is(err, ErrUnknown) {
		w.log.Warn("delivery sent, but the ledger no longer has it", "delivery", id, "provider_id", providerID)
		return w.settle(msg.Term(), id, outcomeDropped)
	}
	if err != nil {
		// The message comes back and is sent again; its stable id lets the
		// receiver recognise the copy.
		w.log.Error("record sent delivery", "delivery", id, "provider_id", providerID, "err", err)
		return w.settle(msg.NakWithDelay(w.cfg.BackoffBase), id, outcomeReturned)
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

// wait takes a token from the kind's rate limit, telling JetStream the
// message is in progress while it waits. It returns stop's error, giving
// the token back, when stop ends first.
func (k *kind) wait(stop context.Context, msg jetstream.Msg, ackWait time.Duration) error {
	if k.limiter == nil {
		return nil
	}
	r := k.limiter.Reserve()
	delay := r.Delay()
	if delay == 0 {
		return nil
	}
	_ = msg.InProgress()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	keepAlive := time.NewTicker(ackWait / 3)
	defer keepAlive.Stop()
	for {
		select {
		case <-timer.C:
			return nil
		case <-keepAlive.C:
			_ = msg.InProgress()
		case <-stop.Done():
			r.Cancel()
			return stop.Err()
		}
	}
}
