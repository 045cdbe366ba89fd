package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/store"
)

// replayFetchWait bounds one fetch of ReplayResults.
const replayFetchWait = 2 * time.Second

// ReplayResults records again every outcome the results stream took since
// the given time, up to the last one it held when called, and returns how
// many it read. A control process restored from a replica calls it before
// Run: the outcomes its predecessor recorded (and acknowledged) after the
// replica's last sync are missing from the restored database, and the
// stream still has them. Recording is idempotent, and an outcome never
// makes a final delivery pending again, so outcomes recorded twice do no
// harm.
func (r *Relay) ReplayResults(ctx context.Context, since time.Time) (int, error) {
	s, err := r.js.Stream(ctx, r.cfg.ResultsStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil // nothing was ever reported
	}
	if err != nil {
		return 0, fmt.Errorf("replay results: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("replay results: %w", err)
	}
	last := info.State.LastSeq
	if last == 0 || info.State.Msgs == 0 || info.State.LastTime.Before(since) {
		return 0, nil
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since})
	if err != nil {
		return 0, fmt.Errorf("replay results: %w", err)
	}
	n := 0
	for {
		batch, err := c.Fetch(resultsBatch, jetstream.FetchMaxWait(replayFetchWait))
		if err != nil {
			return n, fmt.Errorf("replay results: %w", err)
		}
		var outcomes []store.Outcome
		var seq uint64
		for m := range batch.Messages() {
			if md, err := m.Metadata(); err == nil {
				seq = md.Sequence.Stream
			}
			var o Outcome
			if err := json.Unmarshal(m.Data(), &o); err != nil || o.Delivery == "" {
				continue
			}
			outcomes = append(outcomes, store.Outcome{ID: o.Delivery, State: o.State, Attempts: o.Attempts,
				LastError: o.LastError, ProviderID: o.ProviderID, At: o.At})
		}
		if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return n, fmt.Errorf("replay results: %w", err)
		}
		if len(outcomes) > 0 {
			if _, err := r.st.RecordOutcomes(ctx, outcomes); err != nil {
				return n, fmt.Errorf("replay results: %w", err)
			}
			n += len(outcomes)
		}
		if seq >= last || seq == 0 {
			return n, nil
		}
	}
}
