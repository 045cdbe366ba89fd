package natstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterKeepsAStreamWhenANodeStops stops the leader of a stream of
// three replicas: the stream takes messages from the two left, and the node
// catches up when it starts again.
func TestClusterKeepsAStreamWhenANodeStops(t *testing.T) {
	t.Parallel()
	began := time.Now()
	c := Start(t, 3)
	t.Logf("3 nodes ready in %v", time.Since(began).Round(time.Millisecond))
	js := c.JetStream()
	defer js.Conn().Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "CLUSTER", Subjects: []string{"cluster.>"}, Replicas: 3, Storage: jetstream.FileStorage,
	})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			// The id makes a retry of a publish that was stored after all
			// count once.
			eventually(t, 15*time.Second, func() error {
				pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				_, err := js.Publish(pctx, "cluster.m", fmt.Appendf(nil, "message %d", i), jetstream.WithMsgID(fmt.Sprint(i)))
				return err
			})
		}
	}
	publish(0, 100)

	info := streamInfo(t, ctx, stream)
	if info.Cluster == nil {
		t.Fatal("a stream of three replicas has no cluster info")
	}
	leader := c.node(t, info.Cluster.Leader)
	stopped := time.Now()
	leader.Stop()
	t.Logf("stopped %s, the stream's leader, in %v", leader.Name, time.Since(stopped).Round(time.Millisecond))

	published := time.Now()
	publish(100, 200)
	t.Logf("published 100 more without %s in %v", leader.Name, time.Since(published).Round(time.Millisecond))
	eventually(t, 15*time.Second, func() error {
		info := streamInfo(t, ctx, stream)
		if info.Cluster == nil {
			return fmt.Errorf("no cluster info")
		}
		if info.Cluster.Leader == "" || info.Cluster.Leader == leader.Name {
			return fmt.Errorf("leader %q", info.Cluster.Leader)
		}
		if info.State.Msgs != 200 {
			return fmt.Errorf("the stream holds %d messages, want 200", info.State.Msgs)
		}
		return nil
	})

	restarted := time.Now()
	leader.Start()
	eventually(t, 30*time.Second, func() error {
		info := streamInfo(t, ctx, stream)
		if info.Cluster == nil {
			return fmt.Errorf("no cluster info")
		}
		for _, p := range info.Cluster.Replicas {
			if p.Name == leader.Name {
				if !p.Current || p.Offline || p.Lag != 0 {
					return fmt.Errorf("%s is a replica, current %v, offline %v, lag %d", p.Name, p.Current, p.Offline, p.Lag)
				}
				return nil
			}
		}
		if info.Cluster.Leader == leader.Name && info.State.Msgs == 200 {
			return nil // it leads again, with every message
		}
		return fmt.Errorf("%s is not among the replicas %v (leader %s)", leader.Name, replicaNames(info), info.Cluster.Leader)
	})
	t.Logf("%s rejoined and caught up %v after it started", leader.Name, time.Since(restarted).Round(time.Millisecond))
	if info := streamInfo(t, ctx, stream); info.State.Msgs != 200 {
		t.Errorf("after the restart the stream holds %d messages, want 200", info.State.Msgs)
	}
}

// TestClusterOneNode is a plain JetStream server whose file store
// outlives a kill.
func TestClusterOneNode(t *testing.T) {
	t.Parallel()
	c := Start(t, 1)
	if got, want := c.URL(), c.Nodes[0].ClientURL; got != want {
		t.Errorf("URL %q, want %q", got, want)
	}
	js := c.JetStream()
	defer js.Conn().Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ONE", Subjects: []string{"one"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if info := streamInfo(t, ctx, stream); info.Cluster != nil && len(info.Cluster.Replicas) != 0 {
		t.Errorf("a single server has replicas %v", replicaNames(info))
	}
	if _, err := js.Publish(ctx, "one", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	c.Nodes[0].Kill()
	c.Nodes[0].Start()
	c.WaitJetStream()
	eventually(t, 15*time.Second, func() error {
		msg, err := stream.GetLastMsgForSubject(ctx, "one")
		if err != nil {
			return err
		}
		if string(msg.Data) != "kept" {
			return fmt.Errorf("the message is %q", msg.Data)
		}
		return nil
	})
}

// node is the cluster's node of the given name.
func (c *Cluster) node(t *testing.T, name string) *Node {
	t.Helper()
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node is named %q", name)
	return nil
}

// streamInfo asks for the stream's info, retrying while the cluster elects a leader.
func streamInfo(t *testing.T, ctx context.Context, s jetstream.Stream) *jetstream.StreamInfo {
	t.Helper()
	var info *jetstream.StreamInfo
	eventually(t, 15*time.Second, func() error {
		ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var err error
		info, err = s.Info(ictx)
		return err
	})
	return info
}

func replicaNames(info *jetstream.StreamInfo) []string {
	var names []string
	for _, p := range info.Cluster.Replicas {
		names = append(names, p.Name)
	}
	return names
}

// eventually calls f every 100ms until it returns nil, failing the test with
// its last error after d.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %v", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
