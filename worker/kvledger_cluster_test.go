package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/natstest"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/worker"
)

// TestKVLedgerSentOutlivesItsLeader: the server leading the ledger's bucket
// is killed between a claim and the record of its send, as a node of a
// three-node cluster may die mid-delivery. The send is recorded all the same,
// within the time a worker gives one ledger write, so the message is not sent
// a second time.
func TestKVLedgerSentOutlivesItsLeader(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	c := natstest.Start(t, 3)
	js := c.JetStream()
	defer js.Conn().Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := worker.NewKVLedger(ctx, js, worker.KVLedgerConfig{Owner: "a", Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	const id = "d0000000000000000000001"
	if _, err := l.Claim(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	si, err := js.Stream(ctx, "KV_"+worker.DefaultLedgerBucket)
	if err != nil {
		t.Fatal(err)
	}
	leader := si.CachedInfo().Cluster.Leader
	for _, n := range c.Nodes {
		if n.Name == leader {
			n.Kill()
		}
	}
	t.Logf("killed %s, the bucket's leader", leader)

	began := time.Now()
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second) // a worker's ledger timeout
	defer wcancel()
	changed, err := l.Sent(wctx, id, "<p@example.com>")
	if err != nil || !changed {
		t.Fatalf("Sent after the leader died = %v, %v; want true, nil", changed, err)
	}
	t.Logf("recorded %v after the kill", time.Since(began).Round(time.Millisecond))
	got, err := l.Claim(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if e := got[id]; e.State != store.DeliverySent || e.Attempts != 1 {
		t.Fatalf("entry after Sent = %+v; want sent after one attempt", e)
	}
}
