package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock/clocktest"
	"github.com/heraldhq/herald/store"
)

// lostFirstPublish is a JetStream whose first publish of each message is
// never answered, as one is that reached a stream leader which then died.
type lostFirstPublish struct {
	jetstream.JetStream
	mu   sync.Mutex
	seen map[string]bool // message ids published once
}

// unansweredFuture is a publish that no server answers.
type unansweredFuture struct{ msg *nats.Msg }

func (f unansweredFuture) Ok() <-chan *jetstream.PubAck { return nil }
func (f unansweredFuture) Err() <-chan error            { return nil }
func (f unansweredFuture) Msg() *nats.Msg               { return f.msg }

func (l *lostFirstPublish) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	id := m.Header.Get(jetstream.MsgIDHeader)
	l.mu.Lock()
	first := !l.seen[id]
	l.seen[id] = true
	l.mu.Unlock()
	if first {
		return unansweredFuture{msg: m}, nil
	}
	return l.JetStream.PublishMsgAsync(m, opts...)
}

// TestRelayPublishesAgainWhatGoesUnanswered: publishes that no server
// answers (their stream's leader died) are made again after publishRound,
// not left until publishTimeout, while the senders run dry.
func TestRelayPublishesAgainWhatGoesUnanswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ch := e.channel(mailTo("team@example.com"))
	var ids []string
	for i := range 10 {
		_, got := e.enqueue(store.Payload{Subject: "M " + strconv.Itoa(i), Text: "t"}, ch)
		ids = append(ids, got...)
	}
	n := startNATS(t, t.TempDir())
	cfg := testConfig()
	r := e.relay(n, nil, cfg, Options{Logger: testLogger(t)})
	r.js = &lostFirstPublish{JetStream: n.JetStream(), seen: map[string]bool{}}
	ctx := context.Background()
	if _, err := ensureStream(ctx, testLogger(t), n.JetStream(), r.cfg); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := r.publishOutbox(ctx); err != nil {
		t.Fatalf("publish the outbox: %v", err)
	}
	if took := time.Since(began); took > publishTimeout/2 {
		t.Errorf("the outbox took %v to publish, want about %v", took.Round(time.Millisecond), publishRound)
	}
	s, err := n.JetStream().Stream(ctx, r.cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.State.Msgs != uint64(len(ids)) {
		t.Errorf("the stream holds %d messages (%v), want %d, once each", info.State.Msgs, err, len(ids))
	}
	if depth, err := e.st.OutboxDepth(ctx); err != nil || depth != 0 {
		t.Errorf("outbox depth %d (%v), want 0", depth, err)
	}
}

// failFirstPublish is a JetStream that refuses the first publish, as one
// without a stream leader does.
type failFirstPublish struct {
	jetstream.JetStream
	failed atomic.Bool
}

func (f *failFirstPublish) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	if f.failed.CompareAndSwap(false, true) {
		return nil, errors.New("no stream leader")
	}
	return f.JetStream.PublishMsgAsync(m, opts...)
}

// TestRelayTriesAgainSoonAfterAFailedRound: a round of the relay that
// failed (JetStream without a leader, the store fenced) is tried again
// relayRetryFirst later on the relay's clock, with no new delivery to wake
// it and no sweep to come.
func TestRelayTriesAgainSoonAfterAFailedRound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueue(store.Payload{Subject: "M", Text: "t"}, e.channel(mailTo("team@example.com")))
	n := startNATS(t, t.TempDir())
	c := clocktest.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	r := e.relay(n, nil, testConfig(), Options{Logger: testLogger(t), Clock: c, Sweep: make(chan time.Time)})
	r.js = &failFirstPublish{JetStream: n.JetStream()}
	ctx, cancel := context.WithCancel(t.Context())
	if _, err := ensureStream(ctx, testLogger(t), n.JetStream(), r.cfg); err != nil {
		cancel()
		t.Fatal(err)
	}
	idle := make(chan struct{}, 4)
	r.onRelayIdle = func() {
		select {
		case idle <- struct{}{}:
		default: // rounds no one waits for, while the relay stops
		}
	}
	var relay sync.WaitGroup
	relay.Go(func() { r.relay(ctx) })
	defer relay.Wait()
	defer cancel()
	rounds := func(want string) {
		t.Helper()
		select {
		case <-idle:
		case <-time.After(10 * time.Second): // a bound on a failing test, not a wait the test needs
			t.Fatalf("no round of the relay %s", want)
		}
	}
	rounds("at its start")
	if depth, err := e.st.OutboxDepth(ctx); err != nil || depth != 1 {
		t.Fatalf("outbox depth %d (%v) after the failed round, want 1", depth, err)
	}
	c.Advance(relayRetryFirst)
	rounds(fmt.Sprintf("%v after a failed one", relayRetryFirst))
	if depth, err := e.st.OutboxDepth(ctx); err != nil || depth != 0 {
		t.Errorf("outbox depth %d (%v) after the round tried again, want 0", depth, err)
	}
}
