package replica

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/worker"
)

// analyticsFolder is a store and an analytics service over a data folder
// with project p1, whose model has the dataset devs.
type analyticsFolder struct {
	st  *store.Store
	md  *analytics.Service
	dir string
}

func newAnalyticsFolder(t *testing.T) *analyticsFolder {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := seededStore(t, filepath.Join(dir, "herald.db"), 0)
	md, err := analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(dir, "warehouse")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { md.Close() })
	script, err := os.ReadFile("../analytics/ldm/testdata/devs.maql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := md.Manage(ctx, "p1", "u1", string(script)); err != nil {
		t.Fatal(err)
	}
	return &analyticsFolder{st: st, md: md, dir: dir}
}

// load loads n devs into p1, replacing those there.
func (f *analyticsFolder) load(t *testing.T, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,nm_email,nm_name\n")
	for i := range n {
		b.WriteString("d" + string(rune('a'+i)) + ",x@x.io,X\n")
	}
	if _, err := f.md.Load(context.Background(), "p1", "dataset.devs", analytics.LoadFull, strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
}

// replicaStore returns an embedded NATS server's replica store.
func replicaStore(t *testing.T) jetstream.ObjectStore {
	t.Helper()
	n, err := worker.StartEmbedded(t.TempDir(), worker.EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	obs, err := worker.OpenReplicaStore(context.Background(), n.JetStream(), nil, worker.DefaultReplicaBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestSnapshotsFollowTheDataVersions: a project's warehouse is put after each
// change of its data version and not again without one, two snapshots of it
// are kept, a restore takes the one of the restored store's data version
// (or the newest older one), and a restarted process's snapshots know what
// is there already.
func TestSnapshotsFollowTheDataVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newAnalyticsFolder(t)
	obs := replicaStore(t)
	snaps, err := NewSnapshots(obs, filepath.Join(f.dir, "replica-tmp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	snaps.SetVersions(f.st.DataVersions)
	sync := func() int {
		t.Helper()
		v, err := f.st.DataVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := snaps.Sync(ctx, v, f.md)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := sync(); n != 1 {
		t.Errorf("%d snapshots after the model change, want 1", n)
	}
	versions := map[int]int64{}
	for _, devs := range []int{2, 3, 4} {
		f.load(t, devs)
		if n := sync(); n != 1 {
			t.Fatalf("%d snapshots after a load, want 1", n)
		}
		v, _ := f.st.DataVersions(ctx)
		versions[devs] = v["p1"]
	}
	if n := sync(); n != 0 {
		t.Errorf("%d snapshots without a change, want none", n)
	}
	all, err := snaps.list(ctx, warehousePrefix)
	if err != nil || len(all["p1"]) != keepSnapshots {
		t.Fatalf("snapshots kept of p1: %v (%v), want %d", all["p1"], err, keepSnapshots)
	}

	again, err := NewSnapshots(obs, filepath.Join(f.dir, "replica-tmp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	again.SetVersions(f.st.DataVersions)
	if err := again.Load(ctx); err != nil {
		t.Fatal(err)
	}
	v, _ := f.st.DataVersions(ctx)
	if n, err := again.Sync(ctx, v, f.md); n != 0 || err != nil {
		t.Errorf("a restarted process took %d snapshots (%v) of what the store has", n, err)
	}

	for _, c := range []struct {
		want     int64
		devs     int
		restored int64
	}{
		{versions[4], 4, versions[4]},
		{versions[4] + 5, 4, versions[4]}, // the store is ahead of every snapshot
		{versions[3], 3, versions[3]},     // a store restored a sync behind
		{versions[2], 3, versions[3]},     // older than what is kept: the oldest newer one
	} {
		dir := t.TempDir()
		got, err := snaps.RestoreWarehouses(ctx, map[string]int64{"p1": c.want, "gone": 1},
			func(pid string) string { return filepath.Join(dir, pid+".duckdb") })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Version != c.restored || got[0].Want != c.want {
			t.Errorf("restore for data version %d: %+v, want the snapshot of version %d", c.want, got, c.restored)
			continue
		}
		if n := devsIn(t, filepath.Join(dir, "p1.duckdb")); n != c.devs {
			t.Errorf("restore for data version %d holds %d devs, want %d", c.want, n, c.devs)
		}
	}
}

// devsIn counts the devs of a restored warehouse file.
func devsIn(t *testing.T, path string) int {
	t.Helper()
	c, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM f_devs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSnapshotsOfKeys: a key file is put once per content; a restore writes
// the newest where none is, leaves an existing file alone, and refuses an
// object whose content is not what its name says.
func TestSnapshotsOfKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obs := replicaStore(t)
	dir := t.TempDir()
	snaps, err := NewSnapshots(obs, filepath.Join(dir, "tmp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "secret.key")
	for _, content := range []string{"old key\n", "new key\n", "new key\n"} {
		if err := os.WriteFile(key, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := snaps.PutKeys(ctx, map[string]string{"secret.key": key}); err != nil {
			t.Fatal(err)
		}
		snaps.now = func() time.Time { return time.Now().Add(time.Second) } // the next is newer
	}
	all, err := snaps.list(ctx, keysPrefix)
	if err != nil || len(all["secret.key"]) != 2 {
		t.Fatalf("key snapshots: %v (%v), want one per content", all, err)
	}
	other := t.TempDir()
	restored := filepath.Join(other, "secret.key")
	existing := filepath.Join(other, "delivery.key")
	if err := os.WriteFile(existing, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, keysPrefix+"delivery.key/"+strings.Repeat("0", 64), []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	got, err := snaps.RestoreKeys(ctx, map[string]string{"secret.key": restored, "delivery.key": existing})
	if err != nil || len(got) != 1 || got[0].Name != "secret.key" {
		t.Fatalf("restored keys %+v, %v; want secret.key only", got, err)
	}
	if data, _ := os.ReadFile(restored); !bytes.Equal(data, []byte("new key\n")) {
		t.Errorf("restored secret.key holds %q, want the newest", data)
	}
	if data, _ := os.ReadFile(existing); string(data) != "mine" {
		t.Errorf("an existing key file was replaced by %q", data)
	}
	os.Remove(existing)
	if _, err := snaps.RestoreKeys(ctx, map[string]string{"delivery.key": existing}); err == nil ||
		!strings.Contains(err.Error(), "holds content of SHA-256") {
		t.Errorf("restore of an object whose content does not match its name: %v", err)
	}
	if _, err := os.Stat(existing); !os.IsNotExist(err) {
		t.Errorf("a corrupt object was written: %v", err)
	}
}

// TestReplicaWriter: the replica names the folder that writes it, and tells
// whether it holds a database.
func TestReplicaWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obs := replicaStore(t)
	snaps, err := NewSnapshots(obs, filepath.Join(t.TempDir(), "tmp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := snaps.Writer(ctx); ok || err != nil {
		t.Fatalf("writer of an empty replica: %v, %v", ok, err)
	}
	if has, err := snaps.HasDatabase(ctx); has || err != nil {
		t.Fatalf("an empty replica holds a database: %v, %v", has, err)
	}
	if err := snaps.SetWriter(ctx, Writer{Folder: "f1", Name: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, ltxPrefix+"0/0000000000000001-0000000000000001.ltx", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if w, ok, err := snaps.Writer(ctx); !ok || err != nil || w.Folder != "f1" {
		t.Errorf("writer %+v, %v, %v; want f1", w, ok, err)
	}
	if has, err := snaps.HasDatabase(ctx); !has || err != nil {
		t.Errorf("a replica with Litestream's files holds no database: %v, %v", has, err)
	}
}
