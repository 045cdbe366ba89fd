package worker

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock/clocktest"
)

// neverAnswered is a JetStream that answers no publish.
type neverAnswered struct{ jetstream.JetStream }

func (neverAnswered) PublishMsgAsync(m *nats.Msg, _ ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	return unansweredFuture{msg: m}, nil
}

// TestRelayGivesUpUnansweredPublishesAtPublishTimeoutOfItsClock: the wait
// for acknowledgements is the relay's clock's, its rounds and its bound
// alike: once that clock has moved publishTimeout, publishes still
// unanswered are given up with the timeout.
func TestRelayGivesUpUnansweredPublishesAtPublishTimeoutOfItsClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
		r := &Relay{clock: c, js: neverAnswered{}, cfg: Config{Stream: "deliveries"}}
		msg := nats.NewMsg("deliveries.email")
		msg.Header.Set(jetstream.MsgIDHeader, "d1")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := r.awaitAcks(ctx, []jetstream.PubAckFuture{unansweredFuture{msg: msg}})
			done <- err
		}()
		for range publishTimeout / publishRound {
			synctest.Wait()
			c.Advance(publishRound)
		}
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, errNoAck) {
				t.Errorf("awaitAcks: %v, want %v", err, errNoAck)
			}
		default:
			cancel()
			<-done
			t.Fatalf("still waiting for an acknowledgement once the relay's clock has moved %v", publishTimeout)
		}
	})
}
