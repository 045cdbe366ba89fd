package replica

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	_ "modernc.org/sqlite"

	"github.com/heraldhq/herald/internal/paralleltest"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/worker"
)

// TestMain runs the test binary as the replicator process when asked to, as
// the herald binary's replicate command does.
func TestMain(m *testing.M) {
	if os.Getenv("HERALD_TEST_REPLICATOR") == "1" {
		os.Exit(replicatorMain(os.Args[1:]))
	}
	paralleltest.AtLeast(minParallel)
	os.Exit(m.Run())
}

// minParallel is how many tests may run at once unless -test.parallel says:
// at least six, whatever the core count. The tests spend their time
// waiting, not computing: on leases that the NATS server's clock ages and on
// replicator processes that sync every interval, so GOMAXPROCS at a time,
// the default, leaves a small machine idle.
const minParallel = 6

func replicatorMain(args []string) int {
	cfg, err := ParseReplicatorArgs(args, os.Stderr)
	if err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := RunReplicator(ctx, cfg, os.Stdin, os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// replicaServer starts an embedded NATS server that listens on loopback,
// with the replica bucket, and returns its URL and the bucket.
func replicaServer(t *testing.T) (string, *worker.NATS) {
	t.Helper()
	n, err := worker.StartEmbedded(t.TempDir(), worker.EmbeddedConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	if _, err := worker.OpenReplicaStore(context.Background(), n.JetStream(), nil, worker.DefaultReplicaBucket, 1); err != nil {
		t.Fatal(err)
	}
	return n.ClientURL(), n
}

// startReplicator starts the test binary as the replicator of db.
func startReplicator(t *testing.T, url, db string, restore bool) (*Replicator, *syncBuffer) {
	t.Helper()
	return startReplicatorOf(t, ReplicatorConfig{DB: db, Server: url, Bucket: worker.DefaultReplicaBucket,
		SyncInterval: time.Second, ParentGoneWithin: time.Second, Restore: restore}, nil)
}

// startReplicatorOf starts the test binary as the replicator cfg says, told
// valid as StartReplicator tells it, and returns it with what it logs; it is
// killed when the test ends, and its log shown if the test failed.
func startReplicatorOf(t *testing.T, cfg ReplicatorConfig, valid func() time.Time) (*Replicator, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], cfg.Args()...)
	cmd.Env = append(os.Environ(), "HERALD_TEST_REPLICATOR=1")
	log := &syncBuffer{}
	cmd.Stderr = log
	ctx, cancel := context.WithTimeout(context.Background(), waitWithin)
	defer cancel()
	r, err := StartReplicator(ctx, cmd, valid, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	t.Cleanup(func() {
		r.Kill()
		if t.Failed() {
			t.Logf("the replicator wrote:\n%s", log)
		}
	})
	return r, log
}

// TestReplicatorKeepsEveryCommitUnderAHammerOfWrites is the proof that the
// replicator may run beside Herald's store: four writers commit runs with
// twenty deliveries each as fast as they can, two readers read, Herald's own
// checkpointer runs every second, and the replicator, a process of its own,
// replicates and checkpoints the same database meanwhile. The database and
// its restored copy both pass PRAGMA integrity_check and hold the same rows.
func TestReplicatorKeepsEveryCommitUnderAHammerOfWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("hammers a database for seconds")
	}
	t.Parallel()
	url, _ := replicaServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "herald.db")
	st, chans := seededStore(t, path, 20)
	r, _ := startReplicator(t, url, path, false)

	runs, reads := hammer(t, st, chans, 6*time.Second)
	if err := r.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	size, _ := os.Stat(path)
	t.Logf("%d runs of %d deliveries committed (%d MiB), %d reads, %d checkpoints by the replicator",
		runs, len(chans), size.Size()>>20, reads, r.Checkpoints())
	if r.Checkpoints() == 0 {
		t.Error("the replicator made no checkpoint: the hammer did not reach what it is to test")
	}
	want := digest(t, path)
	restored := filepath.Join(t.TempDir(), "herald.db")
	if _, err := restoreIfMissing(context.Background(), restored, natsClient(ReplicatorConfig{Server: url,
		Bucket: worker.DefaultReplicaBucket}, slog.New(slog.DiscardHandler)), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := digest(t, restored); got != want {
		t.Errorf("the restored database holds %s, the database %s", got, want)
	}
}

// hammer commits runs of a delivery to each channel from four writers, as
// fast as they can, and reads from two readers, for d; it returns how many
// runs it committed and reads it made. A failed write or read fails t.
func hammer(t *testing.T, st *store.Store, chans []string, d time.Duration) (runs, reads int64) {
	t.Helper()
	var nRuns, nReads atomic.Int64
	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	var writers, readers sync.WaitGroup
	text := strings.Repeat("hammer ", 150)
	for w := range 4 {
		writers.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				at := time.Unix(int64(w)<<32|int64(i), 0)
				run := store.Run{ID: fmt.Sprintf("r-%d-%d", w, i), SubscriptionID: "s1", ScheduledAt: at, Started: at}
				var ds []store.Delivery
				for j, ch := range chans {
					ds = append(ds, store.Delivery{ID: fmt.Sprintf("%s-%d", run.ID, j), ChannelID: ch, Kind: "email",
						Payload: store.Payload{Subject: run.ID, Text: text}})
				}
				if err := st.EnqueueRun(context.Background(), run, ds); err != nil {
					t.Errorf("enqueue: %v", err)
					return
				}
				nRuns.Add(1)
			}
		})
	}
	for range 2 {
		readers.Go(func() {
			for ctx.Err() == nil {
				id := fmt.Sprintf("r-0-%d-3", nReads.Load()%max(nRuns.Load(), 1))
				if _, err := st.OutgoingDeliveries(context.Background(), id); err != nil {
					t.Errorf("read: %v", err)
					return
				}
				nReads.Add(1)
			}
		})
	}
	writers.Wait()
	readers.Wait()
	return nRuns.Load(), nReads.Load()
}

// seededStore opens Herald's store at path with a user, a project, a
// subscription s1 and n channels, and returns it with the channels' ids.
func seededStore(t *testing.T, path string, n int) (*store.Store, []string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := st.EnsureDomain(ctx, "default", t0); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: "u1", Domain: "default", Login: "u1@example.com", PasswordHash: "x",
		Created: t0, Updated: t0}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, store.Project{ID: "p1", Title: "P", State: store.ProjectEnabled, Author: "u1",
		Contributor: "u1", Created: t0, Updated: t0}, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSubscription(ctx, store.Subscription{ID: "s1", ProjectID: "p1", Owner: "u1", Title: "S", Enabled: true,
		Created: t0, Updated: t0}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	var chans []string
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		if err := st.CreateChannel(ctx, store.Channel{ID: id, Owner: "u1", Kind: "email", Title: id,
			Config: []byte(`{"to":"a@example.com"}`), Created: t0, Updated: t0}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
		chans = append(chans, id)
	}
	return st, chans
}

// digest checks the database at path with PRAGMA integrity_check and returns
// its rows' count and digest: the runs' and deliveries' ids and states.
func digest(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("PRAGMA integrity_check of %s: %q, %v", path, check, err)
	}
	h := sha256.New()
	var n int
	for _, q := range []string{`SELECT id || state FROM runs ORDER BY id`, `SELECT id || state || attempts FROM deliveries ORDER BY id`} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			io.WriteString(h, s)
			n++
		}
		rows.Close()
	}
	return fmt.Sprintf("%d rows, sha256 %s", n, hex.EncodeToString(h.Sum(nil))[:16])
}

// TestTwoSQLiteLibrariesInOneProcessDoNotSeeEachOthersLocks is why the
// replicator is a process of its own: in one process, a checkpoint through
// modernc.org/sqlite (Litestream's library) truncates the write-ahead log
// under a read transaction of mattn/go-sqlite3 (Herald's), whose lock it does
// not see; through mattn/go-sqlite3 the same checkpoint is refused as busy.
func TestTwoSQLiteLibrariesInOneProcessDoNotSeeEachOthersLocks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.db")
	w, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA wal_autocheckpoint = 0`, `CREATE TABLE t(i)`, `INSERT INTO t VALUES (1)`} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tx, err := r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO t VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	checkpoint := func(driver, dsn string) (busy int, wal int64) {
		t.Helper()
		c, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var log, done int
		if err := c.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return busy, fi.Size()
	}
	if busy, wal := checkpoint("sqlite3", "file:"+path+"?_busy_timeout=100"); busy != 1 || wal == 0 {
		t.Errorf("mattn/go-sqlite3: busy %d, log %d bytes; want the checkpoint refused under the reader", busy, wal)
	}
	busy, wal := checkpoint("sqlite", "file:"+path+"?_pragma=busy_timeout(100)")
	if busy != 0 || wal != 0 {
		t.Errorf("modernc.org/sqlite: busy %d, log %d bytes; the libraries see each other's locks now: "+
			"the replicator could run in process", busy, wal)
	}
	t.Logf("modernc.org/sqlite truncated the write-ahead log to %d bytes under mattn/go-sqlite3's reader", wal)
}

// TestReplicatorRestoresAMissingDatabase: a replicator asked to restore finds
// an empty replica and restores nothing; once the replica holds a database,
// a replicator on a path where there is none restores it, and says which
// transaction and when.
func TestReplicatorRestoresAMissingDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs replicator processes")
	}
	t.Parallel()
	url, _ := replicaServer(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	first, _ := startReplicator(t, url, path, true)
	if got := first.Restored(); got != nil {
		t.Fatalf("restored %+v from an empty replica", got)
	}
	st, chans := seededStore(t, path, 2)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := st.EnqueueRun(context.Background(), store.Run{ID: "r1", SubscriptionID: "s1", ScheduledAt: at, Started: at},
		[]store.Delivery{{ID: "d1", ChannelID: chans[0], Kind: "email"}}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := first.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "herald.db")
	second, _ := startReplicator(t, url, other, true)
	got := second.Restored()
	if got == nil || got.TXID == 0 || got.At.Before(before.Add(-time.Minute)) || got.Bytes == 0 {
		t.Fatalf("restored %+v, want the replica's last transaction", got)
	}
	if a, b := digest(t, path), digest(t, other); a != b {
		t.Errorf("the restored database holds %s, the original %s", b, a)
	}
}

// TestReplicatorEndsWhenTheControlProcessIsGone: when its standard input
// ends without a stop (the control process died), the replicator exits
// within the bound it was given, so that it never writes once the dead
// process's lease could be another's.
func TestReplicatorEndsWhenTheControlProcessIsGone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a replicator process")
	}
	t.Parallel()
	url, _ := replicaServer(t)
	r, _ := startReplicator(t, url, filepath.Join(t.TempDir(), "herald.db"), false)
	gone := time.Now()
	_ = r.stdin.Close()
	select {
	case <-r.Done():
		if took := time.Since(gone); took > 3*time.Second {
			t.Errorf("exited %v after its input ended, want within its bound of 1s and a start's slack", took)
		}
	case <-time.After(waitWithin):
		t.Fatal("the replicator did not exit once its input ended")
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
