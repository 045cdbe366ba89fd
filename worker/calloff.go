package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/heraldhq/herald/store"
)

// callOffSubject carries the word that a subscription's pending deliveries,
// or those of one of its channels, are called off: every worker drops the
// ones it holds at once. It is a plain NATS subject: a worker that misses the
// word finds the deliveries failed in the ledger when it claims them (or,
// when it read their entries ahead, once those are a second old: readAhead).
const callOffSubject = "herald.calloff"

// CallOff is a subscription's pending deliveries called off, or those of one
// of its channels only.
type CallOff struct {
	Subscription string `json:"subscription"`
	Channel      string `json:"channel,omitempty"` // "": every channel of the subscription
	Reason       string `json:"reason"`
}

// matches reports whether t is one of the deliveries c calls off.
func (c CallOff) matches(t *task) bool {
	return t.env.Subscription == c.Subscription && (c.Channel == "" || t.env.Channel.ID == c.Channel)
}

// CallOff ends the pending deliveries c names at once: it fails them with
// c.Reason in the store, and in the JetStream ledger when the senders keep
// theirs there, and tells every worker to drop the ones it holds, waiting or
// held for a destination, rather than let them wait out Config.MaxWait. A
// delivery already being sent finishes its send.
func (r *Relay) CallOff(ctx context.Context, c CallOff) error {
	ids, err := r.st.PendingOf(ctx, c.Subscription, c.Channel)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if _, err := r.st.MarkFailed(ctx, id, c.Reason, r.clock.Now()); err != nil && !errors.Is(err, store.ErrNotFound) {
			errs = append(errs, err)
		}
		if l := r.kvLedger.Load(); l != nil {
			if _, err := l.Failed(ctx, id, c.Reason); err != nil && !errors.Is(err, ErrUnknown) {
				errs = append(errs, err)
			}
		}
	}
	if len(ids) > 0 {
		r.recorded()
		r.Settled(ids...)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := r.js.Conn().Publish(callOffSubject, data); err != nil {
		errs = append(errs, fmt.Errorf("tell the workers: %w", err))
	}
	return errors.Join(errs...)
}

// listenCallOffs subscribes the worker to the call-offs; the returned
// function unsubscribes.
func (w *Worker) listenCallOffs() (stop func(), err error) {
	sub, err := w.js.Conn().Subscribe(callOffSubject, func(m *nats.Msg) {
		var c CallOff
		if err := json.Unmarshal(m.Data, &c); err != nil || c.Subscription == "" {
			w.log.Warn("a call-off that does not decode", "err", err)
			return
		}
		w.callOff(c)
		if w.onCallOff != nil {
			w.onCallOff(c)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("worker: listen for call-offs: %w", err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// callOff drops the waiting messages of the deliveries c names, and marks
// those being sent to be dropped should their destination hold them: their
// ledger entries are failed already.
func (w *Worker) callOff(c CallOff) {
	for _, k := range w.kinds {
		for _, t := range k.pool.callOff(c.matches) {
			w.log.Info("delivery called off", "delivery", t.id, "reason", c.Reason)
			w.settle(t.msg.Term(), t.id, outcomeDropped)
			w.finish(k, t, outcomeDropped)
		}
	}
}
