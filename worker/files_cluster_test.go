package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldhq/herald/internal/paralleltest"
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
	paralleltest.HeavyOnMachine(t) // thousands of replicated writes
	c, js, ctx := clusterOf3(t)
	if _, err := worker.OpenFiles(ctx, js, worker.FilesConfig{Replicas: 3, Scratch: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	leader, follower := leaderAndFollower(ctx, t, c, js, "OBJ_"+worker.DefaultFilesBucket)
	control, w := filesAt(ctx, t, leader), filesAt(ctx, t, follower)
	dir := t.TempDir()
	inEightSlots(t, 150, func(slot, i int) error {
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
		return nil
	})
}

// filesAt is a Files whose client is connected to url alone.
func filesAt(ctx context.Context, t *testing.T, url string) *worker.Files {
	t.Helper()
	f, err := worker.OpenFiles(ctx, jetStreamAt(t, url), worker.FilesConfig{Replicas: 3, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
