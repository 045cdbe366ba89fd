package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/internal/gather"
	"github.com/heraldhq/herald/store"
)

// resultsDurable is the control process's consumer of the results stream.
const resultsDurable = "herald-control"

// resultsBatch bounds the outcomes recorded in one transaction.
const resultsBatch = 256

// ensureResults creates the results stream and the control's consumer of it.
func ensureResults(ctx context.Context, log *slog.Logger, js jetstream.JetStream, cfg Config) (c jetstream.Consumer, err error) {
	if err := createResultsStream(ctx, log, js, cfg.ResultsStream, cfg.Replicas, cfg.Keep()); err != nil {
		return nil, err
	}
	err = untilAvailable(ctx, log, "results consumer", func(ctx context.Context) (err error) {
		c, err = ResultsConsumer(ctx, js, cfg.ResultsStream, resultsDurable, cfg.AckWait)
		return err
	})
	return c, err
}

// recordResults writes the outcomes the senders report into the store and
// acknowledges them once written, until ctx ends. The outcomes that arrive
// while one batch is written go together in the next transaction. Recording
// is idempotent, so an outcome delivered twice does no harm.
func (r *Relay) recordResults(ctx context.Context, c jetstream.Consumer) error {
	it, next, err := messages(c, resultsBatch)
	if err != nil {
		return fmt.Errorf("consume results: %w", err)
	}
	in := make(chan jetstream.Msg, resultsBatch)
	var puller sync.WaitGroup
	defer puller.Wait()
	defer it.Stop()
	puller.Go(func() { r.pullResults(ctx, next, in) })
	batch := make([]jetstream.Msg, 0, resultsBatch)
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-in:
			batch = gather.Ready(in, append(batch[:0], m), cap(batch))
		}
		r.record(ctx, batch)
	}
}

// pullResults moves the outcomes next gives to in until ctx ends or the
// iterator closes. What the iterator holds unacknowledged when ctx ends is
// handed out again after the ack wait.
func (r *Relay) pullResults(ctx context.Context, next nextFunc, in chan<- jetstream.Msg) {
	for {
		m, err := next(ctx)
		switch {
		case err == nil:
		case ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed):
			return
		default:
			r.log.Warn("consume results", "err", err)
			continue
		}
		select {
		case in <- m:
		case <-ctx.Done():
			return
		}
	}
}

// record writes one batch of outcomes and acknowledges their messages; a
// batch that cannot be written is left unacknowledged, to come back.
func (r *Relay) record(ctx context.Context, batch []jetstream.Msg) {
	msgs := make([]jetstream.Msg, 0, len(batch))
	outcomes := make([]store.Outcome, 0, len(batch))
	for _, m := range batch {
		var o Outcome
		if err := json.Unmarshal(m.Data(), &o); err != nil || o.Delivery == "" {
			r.log.Warn("a result that does not decode", "subject", m.Subject(), "err", err)
			_ = m.Term()
			continue
		}
		msgs = append(msgs, m)
		outcomes = append(outcomes, store.Outcome{ID: o.Delivery, State: o.State, Attempts: o.Attempts,
			LastError: o.LastError, ProviderID: o.ProviderID, At: o.At})
	}
	if len(msgs) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerTimeout)
	defer cancel()
	final, err := r.st.RecordOutcomes(wctx, outcomes)
	if err != nil {
		r.log.Error("record results", "outcomes", len(outcomes), "err", err)
		r.pause(ctx)
		return
	}
	for _, m := range msgs {
		_ = m.Ack()
	}
	if final > 0 {
		r.recorded()
	}
	var settled []string
	for _, o := range outcomes {
		if o.State != store.DeliveryPending {
			settled = append(settled, o.ID)
		}
	}
	r.Settled(settled...)
}

// pause waits a moment before the next try after an error, or until ctx ends.
func (r *Relay) pause(ctx context.Context) { clock.Sleep(ctx, r.clock, r.cfg.BackoffBase) }

// createResultsStream creates or updates the stream of outcomes, as the
// control process and every sender with the JetStream ledger do: they must
// agree on its configuration, so this is its one definition. maxAge is
// Config.Keep, the ledger's TTL.
func createResultsStream(ctx context.Context, log *slog.Logger, js jetstream.JetStream, name string, replicas int, maxAge time.Duration) error {
	_, err := applyStream(ctx, log, js, "results stream", jetstream.StreamConfig{
		Name:        name,
		Description: "Herald delivery outcomes, reported by the senders for the control process",
		Subjects:    []string{resultsSubjectPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		MaxAge:      maxAge,
		Duplicates:  min(resultsDedupe, maxAge), // the window may not pass the max age
	})
	return err
}
