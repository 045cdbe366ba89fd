package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/store"
)

// publishTimeout bounds the wait for JetStream's acknowledgements of one
// batch; rows whose publish is not acknowledged stay for the next sweep.
const publishTimeout = 30 * time.Second

// relay publishes the outbox at start, on Notify and on every sweep, until
// ctx ends.
func (w *Worker) relay(ctx context.Context) {
	sweep := w.sweep
	if sweep == nil {
		t := time.NewTicker(w.cfg.SweepInterval)
		defer t.Stop()
		sweep = t.C
	}
	for {
		if err := w.publishOutbox(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("relay outbox", "err", err)
		}
		if w.onRelayIdle != nil {
			w.onRelayIdle()
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-sweep:
		}
	}
}

// publishOutbox publishes every outbox row, batch by batch, and deletes the
// rows JetStream acknowledged. The delivery id is the message id, so a row
// published twice (the delete lost to a crash) is stored once.
func (w *Worker) publishOutbox(ctx context.Context) error {
	for ctx.Err() == nil {
		items, err := w.st.Outbox(ctx, w.cfg.RelayBatch)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		done, perr := w.publishBatch(ctx, items)
		if len(done) > 0 {
			if err := w.st.DeleteOutbox(context.WithoutCancel(ctx), done...); err != nil {
				return err
			}
		}
		if perr != nil {
			return perr
		}
	}
	return nil
}

// publishBatch publishes the rows asynchronously and returns the ids of
// those JetStream acknowledged, with the first error.
func (w *Worker) publishBatch(ctx context.Context, items []store.OutboxItem) ([]string, error) {
	futures := make([]jetstream.PubAckFuture, 0, len(items))
	var firstErr error
	for _, it := range items {
		m := nats.NewMsg(deliverySubject(it.Kind, it.DeliveryID))
		m.Data = []byte(it.DeliveryID)
		m.Header.Set(jetstream.MsgIDHeader, it.DeliveryID)
		f, err := w.js.PublishMsgAsync(m, jetstream.WithExpectStream(w.cfg.Stream))
		if err != nil {
			firstErr = fmt.Errorf("publish %s: %w", it.DeliveryID, err)
			break
		}
		futures = append(futures, f)
	}
	timeout := time.NewTimer(publishTimeout)
	defer timeout.Stop()
	done := make([]string, 0, len(futures))
	for i, f := range futures {
		select {
		case <-f.Ok():
			done = append(done, items[i].DeliveryID)
		case err := <-f.Err():
			if firstErr == nil {
				firstErr = fmt.Errorf("publish %s: %w", items[i].DeliveryID, err)
			}
		case <-timeout.C:
			return done, fmt.Errorf("publish: no acknowledgement within %v", publishTimeout)
		case <-ctx.Done():
			return done, ctx.Err()
		}
	}
	return done, firstErr
}
