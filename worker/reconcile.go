package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// reconcileBatch bounds the deliveries one sweep of the reconciler checks.
const reconcileBatch = 500

// reconcileLoop runs reconcile every Config.ReconcileInterval until ctx ends.
func (w *Worker) reconcileLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.ReconcileInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := w.reconcile(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn("reconcile deliveries", "err", err)
			} else if n > 0 {
				w.log.Warn("published again deliveries the stream had lost", "deliveries", n)
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
func (w *Worker) reconcile(ctx context.Context) (int, error) {
	stale, err := w.st.StalePending(ctx, w.now().Add(-w.cfg.ReconcileAfter), reconcileBatch)
	if err != nil || len(stale) == 0 {
		return 0, err
	}
	stream, err := w.js.Stream(ctx, w.cfg.Stream)
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
		m := nats.NewMsg(deliverySubject(it.Kind, it.DeliveryID))
		m.Data = []byte(it.DeliveryID)
		m.Header.Set(jetstream.MsgIDHeader, it.DeliveryID)
		ack, err := w.js.PublishMsg(ctx, m, jetstream.WithExpectStream(w.cfg.Stream))
		if err != nil {
			return n, fmt.Errorf("publish %s again: %w", it.DeliveryID, err)
		}
		if !ack.Duplicate {
			n++
		}
	}
	return n, nil
}
