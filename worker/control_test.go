package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/store"
)

// TestReplayResultsRecordsWhatARestoredStoreMissed: the outcomes the results
// stream took since the given time are recorded, those before it are not,
// and an outcome of an earlier attempt replayed after the final one leaves
// the delivery final.
func TestReplayResultsRecordsWhatARestoredStoreMissed(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, LedgerJetStream)
	n := startNATS(t, t.TempDir())
	ctx := context.Background()
	cfg, err := testConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if err := createResultsStream(ctx, testLogger(t), n.JetStream(), cfg.ResultsStream, 1, cfg.Keep()); err != nil {
		t.Fatal(err)
	}
	run, ids := e.enqueue(store.Payload{Subject: "s"}, e.channel(mailTo("a@example.com")), e.channel(mailTo("b@example.com")),
		e.channel(mailTo("c@example.com")))
	report := func(o Outcome) {
		t.Helper()
		data, _ := json.Marshal(o)
		if _, err := n.JetStream().Publish(ctx, resultsSubjectPrefix+o.Delivery, data); err != nil {
			t.Fatal(err)
		}
	}
	report(Outcome{Delivery: ids[0], State: store.DeliverySent, Attempts: 1, ProviderID: "before", At: t0})
	since := time.Now()
	report(Outcome{Delivery: ids[1], State: store.DeliverySent, Attempts: 1, ProviderID: "p1", At: t0})
	report(Outcome{Delivery: ids[2], State: store.DeliverySent, Attempts: 2, ProviderID: "p2", At: t0})
	report(Outcome{Delivery: ids[2], State: store.DeliveryPending, Attempts: 1, LastError: "451", At: t0})

	got, err := e.relay(n, nil, testConfig(), Options{Logger: testLogger(t)}).ReplayResults(ctx, since)
	if err != nil || got != 3 {
		t.Fatalf("replayed %d, %v; want the 3 outcomes since the given time", got, err)
	}
	if d := e.delivery(ids[0]); d.State != store.DeliveryPending {
		t.Errorf("the delivery reported before the given time is %s, want it left pending", d.State)
	}
	for _, id := range ids[1:] {
		if d := e.delivery(id); d.State != store.DeliverySent {
			t.Errorf("delivery %s is %s after the replay, want sent", id, d.State)
		}
	}
	if r := e.run(run.ID); r.State == store.RunDelivered {
		t.Errorf("run %s delivered with a delivery still pending", run.ID)
	}
}

// TestReplayResultsWithoutAStreamOrOutcomes: no results stream, or none
// since the given time, replays nothing and is no error.
func TestReplayResultsWithoutAStreamOrOutcomes(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, LedgerJetStream)
	n := startNATS(t, t.TempDir())
	r := e.relay(n, nil, testConfig(), Options{Logger: testLogger(t)})
	if got, err := r.ReplayResults(context.Background(), time.Now()); got != 0 || err != nil {
		t.Errorf("without a results stream: %d, %v", got, err)
	}
}

// TestControlResources: the lease bucket forgets a key its ttl after its last
// write, and the replica store keeps what is put into it.
func TestControlResources(t *testing.T) {
	t.Parallel()
	n := startNATS(t, t.TempDir())
	ctx := context.Background()
	kv, err := OpenControlBucket(ctx, n.JetStream(), nil, DefaultControlBucket, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "lease", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "lease", []byte("b")); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Fatalf("a second create of a live lease: %v, want ErrKeyExists", err)
	}
	deadline := time.Now().Add(testTimeout)
	for {
		if _, err := kv.Create(ctx, "lease", []byte("b")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease did not lapse")
		}
		time.Sleep(50 * time.Millisecond) // the server's clock ages the entry
	}
	obs, err := OpenReplicaStore(ctx, n.JetStream(), nil, DefaultReplicaBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "x", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if st, err := obs.Status(ctx); err != nil || st.TTL() != 0 {
		t.Errorf("replica store TTL %v (%v), want none", st.TTL(), err)
	}
}

// TestResultLostInFlightComesBackWithinTheAckWait: an outcome handed to the
// control process and never acknowledged, as one lost with its connection
// when a NATS server dies, comes again within the ack wait rather than
// JetStream's default 30s, so the run it settles is not left open that long.
func TestResultLostInFlightComesBackWithinTheAckWait(t *testing.T) {
	t.Parallel()
	n := startNATS(t, t.TempDir())
	ctx := awaitCtx(t)
	cfg := testConfig()
	cfg.AckWait = time.Second
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c, err := ensureResults(ctx, testLogger(t), n.JetStream(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(Outcome{Delivery: "d1", State: store.DeliverySent, Attempts: 1, At: t0})
	if _, err := n.JetStream().Publish(ctx, resultsSubjectPrefix+"d1", data); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(jetstream.FetchMaxWait(testTimeout)); err != nil { // handed out, never acknowledged
		t.Fatal(err)
	}
	within := 3 * cfg.AckWait
	m, err := c.Next(jetstream.FetchMaxWait(within))
	if err != nil {
		t.Fatalf("the outcome left unacknowledged did not come again within %s: %v", within, err)
	}
	if meta, _ := m.Metadata(); meta == nil || meta.NumDelivered != 2 {
		t.Errorf("came again with metadata %+v, want its second delivery", meta)
	}
}
