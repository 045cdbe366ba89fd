package replica

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/worker"
)

// TestFencedReplicatorWritesNothingPastItsLease: a fenced replicator
// replicates while the validity it is told lies ahead. Once it lies behind
// (the control process stalls, or thaws from a freeze, with the lease
// passed), a commit stays out of the replica, whatever the replicator's
// timers do; told a new validity, it uploads the commit.
func TestFencedReplicatorWritesNothingPastItsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("runs replicator processes")
	}
	t.Parallel()
	url, _ := replicaServer(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	var until atomic.Int64
	until.Store(time.Now().Add(time.Hour).UnixNano())
	cfg := ReplicatorConfig{DB: path, Server: url, Bucket: worker.DefaultReplicaBucket, SyncInterval: 200 * time.Millisecond,
		ParentGoneWithin: time.Second, Fenced: true}
	r, log := startReplicatorOf(t, cfg, func() time.Time { return time.Unix(0, until.Load()) })
	st, chans := seededStore(t, path, 1)
	enqueue := func(id string) time.Time {
		t.Helper()
		at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(len(id)+int(id[len(id)-1])) * time.Minute)
		if err := st.EnqueueRun(context.Background(), store.Run{ID: id, SubscriptionID: "s1", ScheduledAt: at, Started: at},
			[]store.Delivery{{ID: "d-" + id, ChannelID: chans[0], Kind: "email"}}); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	syncedAfter := func(at time.Time) {
		t.Helper()
		deadline := time.Now().Add(waitWithin)
		for !r.Synced().After(at) {
			if time.Now().After(deadline) {
				t.Fatalf("not replicated within %v of %v", waitWithin, at)
			}
			time.Sleep(20 * time.Millisecond) // the replicator reports every sync interval
		}
	}
	syncedAfter(enqueue("r1"))

	until.Store(time.Now().Add(-time.Second).UnixNano()) // the lease passed
	time.Sleep(2 * tellEvery)                            // the replicator was told
	fenced := enqueue("r2")
	time.Sleep(10 * cfg.SyncInterval) // ten syncs that must upload nothing
	if got := runsIn(t, restoreCopy(t, url)); got != "r1" {
		t.Errorf("the replica past the lease holds runs %q, want r1 only", got)
	}
	if !strings.Contains(log.String(), "has passed") {
		t.Errorf("the replicator did not say it refused to write:\n%s", log)
	}
	if age := time.Since(r.Synced()); age < 5*cfg.SyncInterval {
		t.Errorf("the replicator says it synced %v ago, %v after the lease passed", age, time.Since(fenced))
	}

	until.Store(time.Now().Add(time.Hour).UnixNano())
	syncedAfter(time.Now())
	if got := runsIn(t, restoreCopy(t, url)); got != "r1 r2" {
		t.Errorf("the replica once the lease is valid again holds runs %q, want r1 r2", got)
	}
}

// restoreCopy restores the replica at url into a database of its own, with a
// replicator that is killed once it restored, and returns its path.
func restoreCopy(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "herald.db")
	r, _ := startReplicator(t, url, path, true)
	r.Kill()
	return path
}

// runsIn lists the ids of the runs in the database at path.
func runsIn(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids sql.NullString
	if err := db.QueryRow(`SELECT group_concat(id, ' ') FROM (SELECT id FROM runs ORDER BY id)`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	return ids.String
}

// TestSyncedIsARecoveryPoint: once the replicator says it synced after a
// commit, the replica holds that commit, even when the replicator is killed
// at that moment, as is a control process that lost its machine. A commit
// the replicator has not read yet from the database is not in the replica,
// whatever upload it made since.
func TestSyncedIsARecoveryPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs replicator processes")
	}
	t.Parallel()
	url, _ := replicaServer(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	st, chans := seededStore(t, path, 1)
	var want []string
	for i := range 8 {
		r, log := startReplicator(t, url, path, false)
		id := fmt.Sprintf("r%d", i)
		at := time.Date(2026, 3, 1, 10, i, 0, 0, time.UTC)
		if err := st.EnqueueRun(context.Background(), store.Run{ID: id, SubscriptionID: "s1", ScheduledAt: at, Started: at},
			[]store.Delivery{{ID: "d-" + id, ChannelID: chans[0], Kind: "email"}}); err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		poll := time.NewTicker(5 * time.Millisecond) // the replicator reports every sync interval
		deadline := time.After(waitWithin)
		for !r.Synced().After(committed) {
			select {
			case <-poll.C:
			case <-deadline:
				t.Fatalf("%s not replicated within %v:\n%s", id, waitWithin, log)
			}
		}
		poll.Stop()
		r.Kill()
		want = append(want, id)
		if got := runsIn(t, restoreCopy(t, url)); got != strings.Join(want, " ") {
			t.Fatalf("the replicator said it synced %v after %s was committed, yet the replica holds runs %q",
				r.Synced().Sub(committed).Round(time.Millisecond), id, got)
		}
	}
}
