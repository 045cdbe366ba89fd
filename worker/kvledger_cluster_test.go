package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/paralleltest"
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
	c, js, ctx := clusterOf3(t)
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

// TestKVLedgerReadsWhatAnotherProcessJustWrote: one process claims a
// delivery through the bucket's leader and, at once, another, connected to a
// server that follows the leader, records its send. The second reads the
// entry the first wrote: a ledger that took the follower's word for it,
// before the follower applied the write, would find no entry and leave a
// sent mail unrecorded, to be sent again (a read right after a write through
// a follower found nothing in 231 of 2,000 tries).
func TestKVLedgerReadsWhatAnotherProcessJustWrote(t *testing.T) {
	t.Parallel()
	paralleltest.HeavyOnMachine(t) // thousands of replicated writes
	c, js, ctx := clusterOf3(t)
	if _, err := worker.NewKVLedger(ctx, js, worker.KVLedgerConfig{Owner: "setup", Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	leader, follower := leaderAndFollower(ctx, t, c, js, "KV_"+worker.DefaultLedgerBucket)
	a, b := ledgerAt(ctx, t, leader, "a"), ledgerAt(ctx, t, follower, "b")
	inEightSlots(t, 500, func(slot, i int) error {
		id := fmt.Sprintf("d%02d%020d", slot, i)
		if _, err := a.Claim(ctx, []string{id}); err != nil {
			return err
		}
		if changed, err := b.Sent(ctx, id, "<p@example.com>"); err != nil || !changed {
			return fmt.Errorf("delivery %s: Sent right after another process's claim = %v, %v; want true, nil", id, changed, err)
		}
		return nil
	})
}

// ledgerAt is a KV ledger of owner whose client is connected to url alone.
func ledgerAt(ctx context.Context, t *testing.T, url, owner string) *worker.KVLedger {
	t.Helper()
	l, err := worker.NewKVLedger(ctx, jetStreamAt(t, url), worker.KVLedgerConfig{Owner: owner, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
