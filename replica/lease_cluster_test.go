package replica

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/natstest"
	"github.com/heraldhq/herald/worker"
)

// TestLeaseKeepsItsHolderThroughTheLossOfTheBucketsLeader: on three
// clustered nats-servers, A holds the lease and B waits for it. The server
// that leads the bucket is killed; electing its successor takes longer than
// the term, and A's entry lapses meanwhile. Once the bucket answers, A holds
// the lease again, and B, which asked all along, leaves it to A.
func TestLeaseKeepsItsHolderThroughTheLossOfTheBucketsLeader(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("three nats-servers and an election")
	}
	cluster := natstest.Start(t, 3)
	ctx := context.Background()
	bucket := func() jetstream.KeyValue {
		js := cluster.JetStream()
		t.Cleanup(js.Conn().Close)
		kv, err := worker.OpenControlBucket(ctx, js, nil, worker.DefaultControlBucket, 3, testTTL)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	a, b := NewLease(bucket(), holder("A", "fa"), testTTL, nil), NewLease(bucket(), holder("B", "fb"), testTTL, nil)
	if err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	h := keepHooked(t, a)
	took := acquireAsync(t, b)
	waitSeesHeld(t, b, "A")

	js := cluster.JetStream()
	defer js.Conn().Close()
	s, err := js.Stream(ctx, "KV_"+worker.DefaultControlBucket)
	if err != nil {
		t.Fatal(err)
	}
	leader := s.CachedInfo().Cluster.Leader
	for _, n := range cluster.Nodes {
		if n.Name == leader {
			n.Kill()
		}
	}
	killed := time.Now()
	select {
	case recreated := <-h.regained:
		t.Logf("A held the lease again %v after %s, its leader, was killed (recreated %v)",
			time.Since(killed).Round(time.Millisecond), leader, recreated)
	case err := <-h.kept:
		t.Fatalf("A lost the lease %v after %s was killed: %v", time.Since(killed).Round(time.Millisecond), leader, err)
	case <-time.After(2 * waitWithin):
		t.Fatalf("A did not hold the lease again within %v of %s's loss", 2*waitWithin, leader)
	}
	wantLeftToA(t, a, b, took)
}
