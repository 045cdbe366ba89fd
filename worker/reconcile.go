package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/store"
)

// reconcileBatch bounds the deliveries one sweep of the reconciler checks.
const reconcileBatch = 500

// reconcileLoop runs reconcile every Config.ReconcileInterval until ctx ends.
func (r *Relay) reconcileLoop(ctx context.Context) {
	t := r.clock.NewTicker(r.cfg.ReconcileInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if n, err := r.reconcile(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("reconcile deliveries", "err", err)
			} else if n > 0 {
				r.log.Warn("published again deliveries the stream had lost", "deliveries", n)
			}
		}
	}
}

// reconcile makes SQLite the source of truth for what still has to go out: a delivery
// pending for longer than Config.ReconcileAfter, with no outbox row and no message in the
// stream (a crash between a message's acknowledgement and its ledger write, or a message
// the stream lost), is published again under its delivery id. A publish the stream
// still remembers within its dedupe window is dropped, and tried again at a later sweep.
// It returns how many it published.
func (r *Relay) reconcile(ctx context.Context) (int, error) {
	stale, err := r.st.StalePending(ctx, r.clock.Now().Add(-r.cfg.ReconcileAfter), reconcileBatch)
	if err != nil || len(stale) == 0 {
		return 0, err
	}
	stream, err := r.js.Stream(ctx, r.cfg.Stream)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range stale {
		_, err := stream.GetLastMsgForSubject(ctx, deliverySubject(it.Kind, it.DeliveryID))
		switch {
		case err == nil:
			continue // its message is there: waiting, retrying or being sent
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			return n, err
		}
		dup, err := r.publishAgain(ctx, it)
		if err != nil {
			return n, err
		}
		if !dup {
			n++
		}
	}
	return n, nil
}

// publishAgain publishes the message of a pending delivery once more and
// reports whether the stream dropped it as a duplicate.
func (r *Relay) publishAgain(ctx context.Context, it store.OutboxItem) (bool, error) {
	outgoing, err := r.st.OutgoingDeliveries(ctx, it.DeliveryID)
	if err != nil {
		return false, err
	}
	d, ok := outgoing[it.DeliveryID]
	if !ok || d.State != store.DeliveryPending {
		return true, nil // settled meanwhile
	}
	data, err := r.envelope(ctx, d)
	if errors.Is(err, errUndeliverable) {
		return true, r.undeliverable(ctx, d.ID, err)
	}
	if err != nil {
		return false, err
	}
	ack, err := r.js.PublishMsg(ctx, deliveryMsg(it.Kind, it.DeliveryID, data), jetstream.WithExpectStream(r.cfg.Stream))
	if err != nil {
		return false, fmt.Errorf("publish %s again: %w", it.DeliveryID, err)
	}
	return ack.Duplicate, nil
}
