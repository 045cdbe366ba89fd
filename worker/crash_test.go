package worker

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// TestCrashMidBurst kills the worker's NATS connection and server in the
// middle of a burst of 1,000 deliveries, with sends in flight, starts both
// again on the same data folders, and counts the Message-IDs the SMTP server
// received: every delivery exactly once. The sends in flight at the crash
// finish and reach the ledger but are never acknowledged; their messages
// come back to the second worker, which finds them sent.
func TestCrashMidBurst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("1,000 deliveries")
	}
	const runs, perRun = 100, 10
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	sender := emailSender(t, peer.Host(), peer.Port())
	var chs []string
	for i := range perRun {
		chs = append(chs, e.channel(mailTo(fmt.Sprintf("team%d@example.com", i))))
	}
	want := make(map[string]bool, runs*perRun)
	var runIDs []string
	for i := range runs {
		run, ids := e.enqueue(store.Payload{Subject: fmt.Sprintf("Report %d", i), Text: "t"}, chs...)
		runIDs = append(runIDs, run.ID)
		for _, id := range ids {
			want[id] = true
		}
	}
	// A short ack wait, so that what the first worker held comes back soon.
	cfg := testConfig()
	cfg.SendTimeout, cfg.AckWait = time.Second, 2*time.Second
	natsDir := t.TempDir()

	// The first worker's sends after the 300th wait at the provider until
	// its NATS server is gone, so that they are accepted and written to the
	// ledger but never acknowledged.
	first := startNATS(t, natsDir)
	paused := &pausingSender{Sender: sender, after: 300, entered: make(chan struct{}, 1), release: make(chan struct{})}
	a := e.start(first, []channels.Sender{paused}, cfg)
	a.relay.Notify()
	<-paused.entered
	crash(first)
	a.cancel()
	close(paused.release)
	a.stopCrashed(t)
	settledBy := make(map[string]bool)
	collect(a, settledBy)
	unacked := int(paused.held.Load())
	t.Logf("settled before the crash: %d, of which %d unacknowledged", len(settledBy), unacked)

	second := startNATS(t, natsDir)
	b := e.start(second, []channels.Sender{sender}, cfg)
	b.relay.Notify()
	timeout := time.After(testTimeout)
	outcomes := make(map[outcome]int)
	for len(settledBy) < len(want) {
		select {
		case ev := <-b.events:
			outcomes[ev.o]++
			if ev.o == outcomeSent || ev.o == outcomeSkipped {
				settledBy[ev.id] = true
			}
		case <-timeout:
			t.Fatalf("%d of %d deliveries settled in time", len(settledBy), len(want))
		}
	}
	// What the first worker sent but could not acknowledge comes back after
	// the ack wait; the ledger says sent, and it is acknowledged unsent.
	awaitStreamEmpty(t, second)
	b.stop(t)
	for range len(b.events) {
		outcomes[(<-b.events).o]++
	}
	t.Logf("after the restart: %v", outcomes)
	if outcomes[outcomeSkipped] < unacked {
		t.Errorf("%d redelivered messages found sent in the ledger, want at least the %d unacknowledged", outcomes[outcomeSkipped], unacked)
	}

	received := messageIDs(peer.Messages())
	for msgID, n := range received {
		if n != 1 {
			t.Errorf("Message-ID %s received %d times", msgID, n)
		}
	}
	if len(received) != len(want) {
		t.Errorf("%d distinct mails received, want %d", len(received), len(want))
	}
	for _, runID := range runIDs {
		ds, err := e.st.RunDeliveries(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.State != store.DeliverySent || received[d.ProviderID] != 1 {
				t.Errorf("delivery %s: %s, provider id %q received %d times", d.ID, d.State, d.ProviderID, received[d.ProviderID])
			}
		}
		if r := e.run(runID); r.State != store.RunDelivered {
			t.Errorf("run %s: %s, want delivered", runID, r.State)
		}
	}
}

// collect adds the deliveries a stopped worker sent or found sent.
func collect(r *running, into map[string]bool) {
	for {
		select {
		case ev := <-r.events:
			if ev.o == outcomeSent || ev.o == outcomeSkipped {
				into[ev.id] = true
			}
		default:
			return
		}
	}
}

// TestRepublishAfterPublishCrash publishes an outbox row without deleting
// it, as a relay that died between the two would, and lets the relay run
// again: JetStream drops the second copy and one mail goes out.
func TestRepublishAfterPublishCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	n := startNATS(t, t.TempDir())
	counter := &countingSender{Sender: emailSender(t, peer.Host(), peer.Port())}
	_, ids := e.enqueue(store.Payload{Subject: "Once", Text: "t"}, e.channel(peer.Channel()))

	w := e.relay(n, nil, testConfig(), Options{})
	if _, err := ensureStream(ctx, testLogger(t), n.JetStream(), w.cfg); err != nil {
		t.Fatal(err)
	}
	items, err := e.st.Outbox(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if done, _, err := w.publishBatch(ctx, items); err != nil || len(done) != 1 {
		t.Fatalf("first publish: %v %v", done, err)
	}
	// The relay starts again and finds the row still there.
	if err := w.publishOutbox(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := e.st.Outbox(ctx, 10); err != nil || len(left) != 0 {
		t.Fatalf("outbox after the relay: %v %v", left, err)
	}
	stream, err := n.JetStream().Stream(ctx, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq != 1 || info.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages, last sequence %d; want one message", info.State.Msgs, info.State.LastSeq)
	}

	r := e.start(n, []channels.Sender{counter}, testConfig())
	r.await(t, ids[0], outcomeSent)
	r.stop(t)
	if msgs := peer.Messages(); len(msgs) != 1 || counter.calls.Load() != 1 {
		t.Errorf("%d mails received after %d sends, want 1", len(msgs), counter.calls.Load())
	}
	cons, err := stream.Consumer(ctx, durable("email"))
	if err != nil {
		t.Fatal(err)
	}
	// The server takes in an acknowledgement after the flush that carried it
	// returned: the consumer is asked until it holds nothing more.
	var ci *jetstream.ConsumerInfo
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for timeout := time.After(testTimeout); ; {
		if ci, err = cons.Info(ctx); err != nil {
			t.Fatal(err)
		}
		if ci.NumPending == 0 && ci.NumAckPending == 0 {
			break
		}
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("consumer: %d pending, %d awaiting ack after %v; want none", ci.NumPending, ci.NumAckPending, testTimeout)
		}
	}
	if ci.NumRedelivered != 0 {
		t.Errorf("consumer: %d redelivered; want none", ci.NumRedelivered)
	}
}

// TestAWorkerThatDiesBeforeItsLedgerWriteLeavesTheMessage: a worker that sent a
// message and dies before the ledger recorded it, its server living on, leaves the
// message unacknowledged: it goes out again to the next worker, which records it.
// A worker that acknowledged before its ledger write would leave the delivery
// pending, its message gone, until the reconciler.
func TestAWorkerThatDiesBeforeItsLedgerWriteLeavesTheMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, e.channel(peer.Channel()))
	srv, err := StartEmbedded(t.TempDir(), EmbeddedConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cfg := testConfig()
	cfg.AckWait = time.Second
	relay := e.start(srv, nil, cfg) // a relay, and a worker without senders
	relay.relay.Notify()
	repair := e.sabotage("deliveries")

	first := e.client(srv)
	ctx, die := context.WithCancel(context.Background())
	done := make(chan error, 1)
	refused := make(chan struct{}, 1)
	w := e.worker(first, []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, cfg, nil)
	w.log = slog.New(onMessage{"record sent delivery; trying again", refused})
	go func() { done <- w.Run(ctx) }()
	select { // sent, and its ledger write refused
	case <-refused:
	case <-time.After(testTimeout):
		t.Fatal("the send's ledger write was not refused")
	}
	crash(first) // the process dies: its connection goes, nothing more is said
	die()
	<-done
	repair()

	second := e.client(srv)
	events := make(chan settled, 16)
	w = e.worker(second, []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, cfg,
		func(id string, o outcome) { events <- settled{id, o} })
	ctx, stop := context.WithCancel(context.Background())
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	for timeout := time.After(testTimeout); ; {
		select {
		case ev := <-events:
			if ev.id == ids[0] && ev.o == outcomeSent {
				return
			}
		case <-timeout:
			t.Fatalf("delivery %s: %+v, not sent again by the next worker", ids[0], e.delivery(ids[0]))
		}
	}
}

// client connects to the embedded server srv, which listens, as another process would.
func (e *env) client(srv *NATS) *NATS {
	e.t.Helper()
	n, err := Connect(ExternalConfig{URL: srv.ClientURL()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(n.Close)
	return n
}

// worker is a worker over n with the SQLite ledger, not running, telling settled of each outcome.
func (e *env) worker(n *NATS, senders []channels.Sender, cfg Config, settled func(string, outcome)) *Worker {
	e.t.Helper()
	w, err := New(n.JetStream(), NewSQLiteLedger(e.st, nil, nil), e.files(n), e.deliveryBox, senders, cfg,
		Options{Logger: testLogger(e.t)})
	if err != nil {
		e.t.Fatal(err)
	}
	w.onSettle = settled
	return w
}

// onMessage is a log that tells seen, once, of a line whose message is msg.
type onMessage struct {
	msg  string
	seen chan<- struct{}
}

func (o onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (o onMessage) WithAttrs([]slog.Attr) slog.Handler       { return o }
func (o onMessage) WithGroup(string) slog.Handler            { return o }
func (o onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == o.msg {
		select {
		case o.seen <- struct{}{}:
		default:
		}
	}
	return nil
}
