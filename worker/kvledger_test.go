package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// newKVLedger returns a ledger of owner in the default bucket of n, its
// clock stopped at t0, that tries a result's publish for a moment only.
func newKVLedger(t *testing.T, n *NATS, owner string, log *slog.Logger) *KVLedger {
	return newKVLedgerAt(t, n, owner, log, func() time.Time { return t0 })
}

// newKVLedgerAt is newKVLedger on the clock now.
func newKVLedgerAt(t *testing.T, n *NATS, owner string, log *slog.Logger, now func() time.Time) *KVLedger {
	t.Helper()
	l, err := NewKVLedger(awaitCtx(t), n.JetStream(), KVLedgerConfig{Owner: owner, Logger: log,
		Clock: clock.NowFrom(now), PublishFor: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// result is one message of the results stream.
type result struct {
	subject, msgID string
	o              Outcome
}

// readResults reads the results stream from its start with a new durable
// consumer and returns its messages, failing the test unless the stream
// holds exactly want.
func readResults(t *testing.T, n *NATS, want int) []result {
	t.Helper()
	ctx := awaitCtx(t)
	js := n.JetStream()
	stream, err := js.Stream(ctx, DefaultResultsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(want) {
		t.Fatalf("results stream holds %d messages, want %d", info.State.Msgs, want)
	}
	c, err := ResultsConsumer(ctx, js, DefaultResultsStream, "control-"+store.NewID(8), DefaultAckWait)
	if err != nil {
		t.Fatal(err)
	}
	var out []result
	for len(out) < want {
		batch, err := c.Fetch(want-len(out), jetstream.FetchMaxWait(testTimeout))
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			r := result{subject: msg.Subject(), msgID: msg.Headers().Get(jetstream.MsgIDHeader)}
			if err := json.Unmarshal(msg.Data(), &r.o); err != nil {
				t.Fatal(err)
			}
			if err := msg.Ack(); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// wantResult fails the test unless r is the outcome o of its delivery,
// published at t0.
func wantResult(t *testing.T, r result, o Outcome) {
	t.Helper()
	o.At = t0
	msgID := o.Delivery + "." + o.State + "." + strconv.Itoa(o.Attempts)
	if r.subject != resultsSubjectPrefix+o.Delivery || r.msgID != msgID || r.o != o {
		t.Fatalf("result %s %s %+v, want %s %s %+v", r.subject, r.msgID, r.o, resultsSubjectPrefix+o.Delivery, msgID, o)
	}
}

// TestKVLedgerPublishesOutcomes: every outcome written is published once on
// the results stream.
func TestKVLedgerPublishesOutcomes(t *testing.T) {
	t.Parallel()
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	l := newKVLedger(t, n, "a", nil)
	ids := randomIDs(3)
	claim(t, l, ids, Entry{State: store.DeliveryPending})
	if ok, err := l.Sent(ctx, ids[0], "<p0@example.com>"); err != nil || !ok {
		t.Fatalf("Sent = %v, %v", ok, err)
	}
	if _, err := l.Attempt(ctx, ids[1], "421 busy"); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Failed(ctx, ids[1], "550 no such user"); err != nil || !ok {
		t.Fatalf("Failed = %v, %v", ok, err)
	}
	if _, err := l.Attempt(ctx, ids[2], "451 try later"); err != nil {
		t.Fatal(err)
	}
	// Refused outcomes publish nothing.
	if ok, err := l.Sent(ctx, ids[0], "<again@example.com>"); err != nil || ok {
		t.Fatalf("second Sent = %v, %v", ok, err)
	}
	if _, err := l.Attempt(ctx, ids[1], "late"); !errors.Is(err, ErrFinal) {
		t.Fatalf("Attempt of a failed delivery: %v", err)
	}
	rs := readResults(t, n, 4)
	wantResult(t, rs[0], Outcome{Delivery: ids[0], State: store.DeliverySent, Attempts: 1, ProviderID: "<p0@example.com>"})
	wantResult(t, rs[1], Outcome{Delivery: ids[1], State: store.DeliveryPending, Attempts: 1, LastError: "421 busy"})
	wantResult(t, rs[2], Outcome{Delivery: ids[1], State: store.DeliveryFailed, Attempts: 1, LastError: "550 no such user"})
	wantResult(t, rs[3], Outcome{Delivery: ids[2], State: store.DeliveryPending, Attempts: 1, LastError: "451 try later"})
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestKVLedgerClaimRepublishes: a result whose publish failed after the
// ledger write goes out when the final entry is claimed again, and claims
// after that add no copy.
func TestKVLedgerClaimRepublishes(t *testing.T) {
	t.Parallel()
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	var logs syncBuffer
	l := newKVLedger(t, n, "a", slog.New(slog.NewTextHandler(&logs, nil)))
	ids := randomIDs(1)
	id := ids[0]
	claim(t, l, ids, Entry{State: store.DeliveryPending})
	if err := n.JetStream().DeleteStream(ctx, DefaultResultsStream); err != nil {
		t.Fatal(err)
	}
	// The ledger write succeeds, the publish cannot.
	if ok, err := l.Sent(ctx, id, "<p@example.com>"); err != nil || !ok {
		t.Fatalf("Sent without a results stream = %v, %v; want true", ok, err)
	}
	if !strings.Contains(logs.String(), "publish delivery result") {
		t.Fatalf("the failed publish was not logged: %q", logs.String())
	}
	other := newKVLedger(t, n, "b", nil) // creates the results stream again
	readResults(t, n, 0)
	sent := Entry{State: store.DeliverySent, Attempts: 1}
	claim(t, other, ids, sent)
	claim(t, other, ids, sent)
	claim(t, l, ids, sent)
	rs := readResults(t, n, 1)
	wantResult(t, rs[0], Outcome{Delivery: id, State: store.DeliverySent, Attempts: 1, ProviderID: "<p@example.com>"})
}

// TestKVLedgerStaleClaim: a second process claims a delivery after the first
// did (the first holder was presumed dead), so the first one's remembered
// revision is stale: its send is still recorded, once, and the second one's
// is refused.
func TestKVLedgerStaleClaim(t *testing.T) {
	t.Parallel()
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	later := t0.Add(DefaultAckWait) // the first claim has lapsed
	a, b := newKVLedger(t, n, "a", nil), newKVLedgerAt(t, n, "b", nil, func() time.Time { return later })
	ids := randomIDs(1)
	id := ids[0]
	claim(t, a, ids, Entry{State: store.DeliveryPending})
	claim(t, b, ids, Entry{State: store.DeliveryPending})
	if ok, err := a.Sent(ctx, id, "<a@example.com>"); err != nil || !ok {
		t.Fatalf("Sent by the first owner = %v, %v; want true", ok, err)
	}
	if ok, err := b.Sent(ctx, id, "<b@example.com>"); err != nil || ok {
		t.Fatalf("Sent by the second owner = %v, %v; want false", ok, err)
	}
	if ok, err := a.Sent(ctx, id, "<a2@example.com>"); err != nil || ok {
		t.Fatalf("second Sent by the first owner = %v, %v; want false", ok, err)
	}
	kve, err := a.kv.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	e, err := unmarshalEntry(kve.Value())
	if err != nil {
		t.Fatal(err)
	}
	if e.State != store.DeliverySent || e.Attempts != 1 || e.ProviderID != "<a@example.com>" || e.Owner != "b" ||
		!e.Claimed.Equal(later) || !e.Updated.Equal(t0) {
		t.Fatalf("entry %+v: want sent once by a, last claimed by b", e)
	}
	rs := readResults(t, n, 1)
	wantResult(t, rs[0], Outcome{Delivery: id, State: store.DeliverySent, Attempts: 1, ProviderID: "<a@example.com>"})
}

// TestKVLedgerClaimIsExclusive: a claim that its owner renews keeps every
// other process from claiming the delivery, which finds it Busy; once the
// owner stops renewing, the claim lapses after the lease and another process
// takes it.
func TestKVLedgerClaimIsExclusive(t *testing.T) {
	t.Parallel()
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	var now atomic.Int64
	now.Store(t0.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	a, b := newKVLedgerAt(t, n, "a", nil, clock), newKVLedgerAt(t, n, "b", nil, clock)
	ids := randomIDs(1)
	claim(t, a, ids, Entry{State: store.DeliveryPending})
	claim(t, b, ids, Entry{State: store.DeliveryPending, Busy: true})
	for range 3 { // a sends for longer than the lease, renewing its claim
		now.Add(int64(DefaultAckWait / 2))
		if err := a.Renew(ctx, ids); err != nil {
			t.Fatal(err)
		}
		claim(t, b, ids, Entry{State: store.DeliveryPending, Busy: true})
	}
	now.Add(int64(DefaultAckWait)) // a is gone
	claim(t, b, ids, Entry{State: store.DeliveryPending})
	claim(t, a, ids, Entry{State: store.DeliveryPending, Busy: true})
	if err := a.Renew(ctx, ids); err != nil { // a claim lost is not renewed
		t.Fatal(err)
	}
	if ok, err := b.Sent(ctx, ids[0], "<b@example.com>"); err != nil || !ok {
		t.Fatalf("Sent by the new holder = %v, %v; want true", ok, err)
	}
}

// TestKVLedgerInvalidKey: an id that is no key of the bucket is an error,
// and a claim that holds one writes nothing.
func TestKVLedgerInvalidKey(t *testing.T) {
	t.Parallel()
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	l := newKVLedger(t, n, "a", nil)
	good := randomIDs(1)[0]
	for _, bad := range []string{"", "a b", "a.*", ".a", "a..b", "a>"} {
		if _, err := l.Claim(ctx, []string{good, bad}); !errors.Is(err, jetstream.ErrInvalidKey) {
			t.Errorf("Claim of %q: %v; want ErrInvalidKey", bad, err)
		}
		if _, err := l.Sent(ctx, bad, "p"); !errors.Is(err, jetstream.ErrInvalidKey) {
			t.Errorf("Sent of %q: %v; want ErrInvalidKey", bad, err)
		}
		if _, err := l.Attempt(ctx, bad, "e"); !errors.Is(err, jetstream.ErrInvalidKey) {
			t.Errorf("Attempt of %q: %v; want ErrInvalidKey", bad, err)
		}
		if _, err := l.Failed(ctx, bad, "r"); !errors.Is(err, jetstream.ErrInvalidKey) {
			t.Errorf("Failed of %q: %v; want ErrInvalidKey", bad, err)
		}
	}
	if _, err := l.kv.Get(ctx, good); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("a refused claim wrote %s: %v", good, err)
	}
	if _, err := NewKVLedger(ctx, n.JetStream(), KVLedgerConfig{}); err == nil {
		t.Fatal("a ledger without an owner was made")
	}
}

// TestKVLedgerResultOutlivesAnOutage: the results stream is gone while a send is
// recorded (a leader election, say) and comes back only after two tries of the
// publish failed; the ledger still tries, and the result arrives without waiting for
// another claim of the delivery.
func TestKVLedgerResultOutlivesAnOutage(t *testing.T) {
	t.Parallel()
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	l, err := NewKVLedger(ctx, n.JetStream(), KVLedgerConfig{Owner: "a", Clock: clock.NowFrom(func() time.Time { return t0 })})
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 16)
	l.failedTry = func(err error) { failed <- err }
	ids := randomIDs(1)
	claim(t, l, ids, Entry{State: store.DeliveryPending})
	if err := n.JetStream().DeleteStream(ctx, DefaultResultsStream); err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := l.Sent(ctx, ids[0], "<p@example.com>")
		sent <- err
	}()
	for range 2 {
		select {
		case err := <-failed:
			t.Logf("a try failed: %v", err)
		case err := <-sent:
			t.Fatalf("Sent returned (%v) after fewer than two tries of its result", err)
		}
	}
	if err := createResultsStream(ctx, testLogger(t), n.JetStream(), DefaultResultsStream, 1, DefaultLedgerTTL); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	rs := readResults(t, n, 1)
	wantResult(t, rs[0], Outcome{Delivery: ids[0], State: store.DeliverySent, Attempts: 1, ProviderID: "<p@example.com>"})
}
