package replica

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/worker"
)

// TestReplicatorInTheServingProcessBreaksTheDatabase measures the design not
// taken: the hammer of TestReplicatorKeepsEveryCommitUnderAHammerOfWrites
// with Litestream's library running in the process that holds Herald's
// store. It runs in a child process, which it expects to crash or to find
// its database or the replica broken. It is opt-in
// (HERALD_MEASURE_IN_PROCESS=1): it shows why the replicator is a process of
// its own, and fails the day the two SQLite libraries can share a process.
// Not parallel: a measurement, it runs before the parallel tests, alone.
func TestReplicatorInTheServingProcessBreaksTheDatabase(t *testing.T) {
	if os.Getenv("HERALD_MEASURE_IN_PROCESS") == "" {
		t.Skip("a measurement: HERALD_MEASURE_IN_PROCESS=1 runs it")
	}
	if os.Getenv("HERALD_TEST_IN_PROCESS_CHILD") == "1" {
		inProcessHammer(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicatorInTheServingProcessBreaksTheDatabase$", "-test.v")
	cmd.Env = append(os.Environ(), "HERALD_TEST_IN_PROCESS_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("the process with Litestream and the store in it: %v\n%s", err, tail(string(out), 2000))
	if err == nil {
		t.Error("the store and Litestream in one process survived the hammer: the replicator could run in process")
	}
}

// inProcessHammer is the child of TestReplicatorInTheServingProcessBreaksTheDatabase.
func inProcessHammer(t *testing.T) {
	url, _ := replicaServer(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	st, chans := seededStore(t, path, 20)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	slog.SetDefault(log)
	in, stop := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- RunReplicator(context.Background(), ReplicatorConfig{DB: path, Server: url, Bucket: worker.DefaultReplicaBucket,
			SyncInterval: time.Second, ParentGoneWithin: time.Second}, in, io.Discard, log)
	}()
	runs, reads := hammer(t, st, chans, 6*time.Second)
	_, _ = io.WriteString(stop, "stop\n")
	if err := <-done; err != nil {
		t.Errorf("replicator: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}
	t.Logf("%d runs, %d reads", runs, reads)
	want := digest(t, path)
	restored := filepath.Join(t.TempDir(), "herald.db")
	if _, err := restoreIfMissing(context.Background(), restored, natsClient(ReplicatorConfig{Server: url,
		Bucket: worker.DefaultReplicaBucket}, log), log); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := digest(t, restored); got != want {
		t.Errorf("the restored database holds %s, the database %s", got, want)
	}
}

func tail(s string, n int) string { return s[max(len(s)-n, 0):] }
