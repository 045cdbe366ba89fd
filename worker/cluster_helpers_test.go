package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/heraldhq/herald/internal/natstest"
)

// leaderAndFollower returns the client URLs of the server of c that leads
// stream and of one that follows it.
func leaderAndFollower(ctx context.Context, t *testing.T, c *natstest.Cluster, js jetstream.JetStream, stream string) (leader, follower string) {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if n.Name == s.CachedInfo().Cluster.Leader {
			leader = n.ClientURL
		} else {
			follower = n.ClientURL
		}
	}
	return leader, follower
}

// jetStreamAt is a client connected to the server at url alone, closed when
// the test ends.
func jetStreamAt(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// inEightSlots calls f n times in each of eight goroutines, as a worker's
// eight send slots go, and fails t with the first error.
func inEightSlots(t *testing.T, n int, f func(slot, i int) error) {
	t.Helper()
	var g errgroup.Group
	for slot := range 8 {
		g.Go(func() error {
			for i := range n {
				if err := f(slot, i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// clusterOf3 starts a three-node NATS cluster, unless the tests are short,
// and returns it with a client connected to every node and a context that
// gives the test's requests a minute; both end with the test.
func clusterOf3(t *testing.T) (*natstest.Cluster, jetstream.JetStream, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	c := natstest.Start(t, 3)
	js := c.JetStream()
	t.Cleanup(js.Conn().Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c, js, ctx
}
