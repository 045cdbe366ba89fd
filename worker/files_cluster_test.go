package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/heraldhq/herald/internal/natstest"
	"github.com/heraldhq/herald/worker"
)

// TestFilesFetchThroughAFollowerRightAfterThePut: the control process puts
// a file through the bucket's leader and a worker, connected to a server
// that follows the leader, fetches it at once, as it does when the message
// naming the file reaches it first. The worker gets the file: an object the
// replica it asked has not applied yet is not one that is gone, which would
// fail the delivery for good.
func TestFilesFetchThroughAFollowerRightAfterThePut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	c := natstest.Start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := c.JetStream()
	defer js.Conn().Close()
	if _, err := worker.OpenFiles(ctx, js, worker.FilesConfig{Replicas: 3, Scratch: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	si, err := js.Stream(ctx, "OBJ_"+worker.DefaultFilesBucket)
	if err != nil {
		t.Fatal(err)
	}
	var leader, follower string
	for _, n := range c.Nodes {
		if n.Name == si.CachedInfo().Cluster.Leader {
			leader = n.ClientURL
		} else {
			follower = n.ClientURL
		}
	}
	control, w := filesAt(ctx, t, leader), filesAt(ctx, t, follower)
	dir := t.TempDir()
	var g errgroup.Group
	for slot := range 8 {
		g.Go(func() error {
			for i := range 250 {
				path := filepath.Join(dir, fmt.Sprintf("report-%d-%d.csv", slot, i))
				if err := os.WriteFile(path, fmt.Appendf(nil, "region,revenue\nslot %d,%d\n", slot, i), 0o600); err != nil {
					return err
				}
				o, err := control.Put(ctx, path)
				if err != nil {
					return err
				}
				if _, err := w.Fetch(ctx, o); err != nil {
					return fmt.Errorf("fetch %s right after its put: %w", filepath.Base(path), err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// filesAt is a Files whose client is connected to url alone.
func filesAt(ctx context.Context, t *testing.T, url string) *worker.Files {
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
	f, err := worker.OpenFiles(ctx, js, worker.FilesConfig{Replicas: 3, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
