package worker

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/internal/clock/clocktest"
	"github.com/heraldhq/herald/store"
)

// sabotage makes every update of a table fail until the returned func repairs it.
func (e *env) sabotage(table string) (repair func()) {
	e.t.Helper()
	raw, err := sql.Open("sqlite3", e.dbPath)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TRIGGER sabotage BEFORE UPDATE ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'sabotaged'); END`); err != nil {
		e.t.Fatal(err)
	}
	return func() {
		if _, err := raw.Exec(`DROP TRIGGER sabotage`); err != nil {
			e.t.Fatal(err)
		}
		raw.Close()
	}
}

// TestLedgerFailureKeepsTheMessage: a send accepted by the provider whose ledger write
// fails is neither acknowledged nor handed back: the sender keeps the message and tries
// the write again until the ledger works, and the delivery ends sent, sent once.
// Acknowledging first would leave it pending for ever were the sender to die; handing it
// back would send it twice.
func TestLedgerFailureKeepsTheMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	ch := e.channel(mailTo("ops@example.com"))
	_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, ch)
	repair := e.sabotage("deliveries")
	cfg := testConfig()
	cfg.BackoffBase, cfg.BackoffCap = 10*time.Millisecond, 50*time.Millisecond
	sender := &countingSender{Sender: emailSender(t, peer.Host(), peer.Port())}
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{sender}, cfg)
	r.relay.Notify()
	if _, err := peer.Await(awaitCtx(t), 1); err != nil { // sent, and the ledger refuses it
		t.Fatal(err)
	}
	if d := e.delivery(ids[0]); d.State != store.DeliveryPending {
		t.Fatalf("delivery %+v while the ledger refuses writes, want pending", d)
	}
	repair()
	r.await(t, ids[0], outcomeSent)
	if d := e.delivery(ids[0]); d.State != store.DeliverySent {
		t.Fatalf("delivery %+v, want sent", d)
	}
	if n := sender.calls.Load(); n != 1 {
		t.Fatalf("%d sends, want one", n)
	}
}

// TestALedgerThatCannotRecordStopsTheSends: while the ledger refuses every
// write, a kind sends no more than maxUnrecordedPerSlot accepted, unrecorded
// mails per slot with their slots let go, and one more per slot that keeps
// its slot; then it sends nothing until the ledger works again, and then every
// delivery goes, each once. A worker that let every slot go at once would send
// the whole burst unrecorded, for a crash to send again.
func TestALedgerThatCannotRecordStopsTheSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	const slots, n = 3, 30
	bound := (1 + maxUnrecordedPerSlot) * slots
	chs := make([]string, n)
	for i := range chs {
		chs[i] = e.channel(mailTo(fmt.Sprintf("ops%d@example.com", i)))
	}
	_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, chs...)
	repair := e.sabotage("deliveries")
	cfg := testConfig()
	cfg.BackoffBase, cfg.BackoffCap = 10*time.Millisecond, 50*time.Millisecond
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Concurrency: slots}}
	sender := &countingSender{Sender: emailSender(t, peer.Host(), peer.Port())}
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{sender}, cfg)
	r.relay.Notify()
	k := r.w.kinds[0]
	ctx := awaitCtx(t)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for { // every slot held by a send that awaits its record
		if _, sending, _ := k.pool.state(); sending == slots && k.unrecorded.Load() == int64(bound) {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			_, sending, _ := k.pool.state()
			t.Fatalf("%d sends, %d unrecorded, %d slots taken; want %d unrecorded holding all %d slots",
				sender.calls.Load(), k.unrecorded.Load(), sending, bound, slots)
		}
	}
	if got := sender.calls.Load(); got != int64(bound) {
		t.Fatalf("%d sends while the ledger refuses writes, want %d", got, bound)
	}
	repair()
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	if got := sender.calls.Load(); got != n {
		t.Fatalf("%d sends, want %d, each once", got, n)
	}
	if got := len(peer.Messages()); got != n {
		t.Fatalf("the relay took %d mails, want %d", got, n)
	}
}

// TestRelayKeepsWhatItCouldNotPublish: with the stream gone, publishing fails and the
// outbox keeps every row; once the stream is back, the rows are published and deleted.
// The relay waits for acknowledgements on its clock, which the test moves through the
// rounds of publishing again until publishTimeout.
func TestRelayKeepsWhatItCouldNotPublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ch1 := e.channel(mailTo("ops@example.com"))
	ch2 := e.channel(mailTo("cfo@example.com"))
	n := startNATS(t, t.TempDir())
	cfg, err := testConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(t0)
	w := e.relay(n, nil, cfg, Options{Logger: testLogger(t), Clock: clk})
	ctx := context.Background()
	if _, err := ensureStream(ctx, testLogger(t), n.JetStream(), w.cfg); err != nil {
		t.Fatal(err)
	}
	if err := n.JetStream().DeleteStream(ctx, cfg.Stream); err != nil {
		t.Fatal(err)
	}
	_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, ch1, ch2)
	failed := make(chan error, 1)
	go func() { failed <- w.publishOutbox(ctx) }()
	if err := awaitMovingClock(t, clk, publishRound, failed); err == nil {
		t.Fatal("publishing without a stream succeeded")
	}
	if rows, _ := e.st.Outbox(ctx, 10); len(rows) != len(ids) {
		t.Fatalf("outbox holds %d rows after a failed publish, want %d", len(rows), len(ids))
	}
	if _, err := ensureStream(ctx, testLogger(t), n.JetStream(), w.cfg); err != nil {
		t.Fatal(err)
	}
	if err := w.publishOutbox(ctx); err != nil {
		t.Fatal(err)
	}
	if rows, _ := e.st.Outbox(ctx, 10); len(rows) != 0 {
		t.Fatalf("outbox holds %d rows after the stream came back", len(rows))
	}
}

// TestReconcilerPublishesWhatTheStreamLost leaves one delivery pending with no outbox
// row and no message (its message was acknowledged before a crash cut its ledger write,
// or the stream lost it) and another whose message waits in the stream: the reconciler
// publishes the first again, which is then sent, and leaves the second alone.
func TestReconcilerPublishesWhatTheStreamLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	lostCh := e.channel(mailTo("lost@example.com"))
	_, lost := e.enqueue(store.Payload{Subject: "lost", Text: "t"}, lostCh)
	ctx := context.Background()
	if err := e.st.DeleteOutbox(ctx, lost...); err != nil { // as if published, then lost
		t.Fatal(err)
	}
	n := startNATS(t, t.TempDir())
	cfg := testConfig()
	w := e.relay(n, nil, cfg, Options{Logger: testLogger(t)})
	if _, err := ensureStream(ctx, testLogger(t), n.JetStream(), w.cfg); err != nil {
		t.Fatal(err)
	}
	waitingCh := e.channel(mailTo("waiting@example.com"))
	_, waiting := e.enqueue(store.Payload{Subject: "waiting", Text: "t"}, waitingCh)
	if err := w.publishOutbox(ctx); err != nil { // in the stream, no sender has taken it yet
		t.Fatal(err)
	}
	published, err := w.reconcile(ctx)
	if err != nil || published != 1 {
		t.Fatalf("reconcile published %d (%v), want 1", published, err)
	}
	if published, err := w.reconcile(ctx); err != nil || published != 0 {
		t.Fatalf("a second sweep published %d (%v), want 0", published, err)
	}
	r := e.start(n, []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, cfg)
	r.await(t, lost[0], outcomeSent)
	r.await(t, waiting[0], outcomeSent)
	if got := messageIDs(peer.Messages()); len(got) != 2 {
		t.Fatalf("Message-IDs %v, want the two deliveries once each", got)
	}
}

// awaitMovingClock returns what done yields, moving clk on by step each time
// the code under test waits on it: an expiry and a round of awaitAcks, for
// the relay. It fails the test after testTimeout of real time.
func awaitMovingClock(t *testing.T, clk *clocktest.Clock, step time.Duration, done <-chan error) error {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	timeout := time.After(testTimeout)
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if clk.Waiting() >= 2 {
				clk.Advance(step)
			}
		case <-timeout:
			t.Fatalf("still waiting after %v; the clock is at %v", testTimeout, clk.Now())
			return nil
		}
	}
}
