package analytics

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a service over a fresh data folder with one project.
type fixture struct {
	s    *Service
	st   *store.Store
	raw  *sql.DB // a second connection to the SQLite file, to sabotage writes
	pid  string
	user string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f := &fixture{st: st, pid: store.NewID(32), user: store.NewID(32)}
	if err := st.EnsureDomain(ctx, "default", now); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: f.user, Domain: "default", Login: "a@x.io", PasswordHash: "x", Created: now, Updated: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, store.Project{ID: f.pid, Title: "P", State: store.ProjectEnabled, Author: f.user,
		Contributor: f.user, Created: now, Updated: now}, "adminRole"); err != nil {
		t.Fatal(err)
	}
	f.s, err = New(ctx, Options{Store: st, Dir: filepath.Join(dir, "warehouse"), Clock: clock.NowFrom(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	f.raw, err = sql.Open("sqlite3", filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.raw.Close()
		f.s.Close()
		st.Close()
	})
	return f
}

func (f *fixture) manage(t testing.TB, script string) {
	t.Helper()
	if _, err := f.s.Manage(context.Background(), f.pid, f.user, script); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) load(dataset, csv string) (LoadResult, error) {
	return f.s.Load(context.Background(), f.pid, dataset, LoadFull, strings.NewReader(csv))
}

// elements returns the titles of an attribute's elements in its default label.
func (f *fixture) elements(t *testing.T, attr string) []string {
	t.Helper()
	objs, err := f.st.ObjectsByIdentifiers(context.Background(), f.pid, []string{attr})
	if err != nil || len(objs) != 1 {
		t.Fatalf("attribute %s: %v %v", attr, objs, err)
	}
	els, err := f.s.Elements(context.Background(), f.pid, objs[0].ID, ElementsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range els.Items {
		out = append(out, e.Title)
	}
	return out
}

// fail makes every write to an SQLite table fail until the test ends.
func (f *fixture) fail(t *testing.T, table, event string) {
	t.Helper()
	if _, err := f.raw.Exec(`CREATE TRIGGER sabotage BEFORE ` + event + ` ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'sabotaged'); END`); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) repair(t *testing.T) {
	t.Helper()
	if _, err := f.raw.Exec(`DROP TRIGGER sabotage`); err != nil {
		t.Fatal(err)
	}
}

func devsScript(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile("ldm/testdata/devs.maql")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

const devsCSV = "id,nm_email,nm_name\nd1,a@x.io,Al\nd2,b@x.io,Bea\n"

func TestManageIsAtomicAcrossStores(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.manage(t, devsScript(t))
	if _, err := f.load("dataset.devs", devsCSV); err != nil {
		t.Fatal(err)
	}
	version, _ := f.s.DataVersion(ctx, f.pid)
	before, _ := f.s.Model(ctx, f.pid)

	// The warehouse empties f_devs, then the store fails: both must stay as they were.
	f.fail(t, "md_tasks", "INSERT")
	_, err := f.s.Manage(ctx, f.pid, f.user, "SYNCHRONIZE {dataset.devs};\nCREATE DATASET {dataset.more}")
	if err == nil || !strings.Contains(err.Error(), "sabotaged") {
		t.Fatalf("manage with a failing store: %v", err)
	}
	f.repair(t)
	if got := f.elements(t, "attr.devs.id"); len(got) != 2 {
		t.Fatalf("devs after a failed change: %v", got)
	}
	after, _ := f.s.Model(ctx, f.pid)
	if after != before || after.Datasets["dataset.more"] != nil {
		t.Fatal("the model changed")
	}
	if v, _ := f.s.DataVersion(ctx, f.pid); v != version {
		t.Fatalf("data version %d, was %d", v, version)
	}
	if objs, _ := f.st.ObjectsByIdentifiers(ctx, f.pid, []string{"dataset.more"}); len(objs) != 0 {
		t.Fatal("dataset.more was stored")
	}
}

func TestLoadIsAtomicAcrossStores(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.manage(t, devsScript(t))
	if _, err := f.load("dataset.devs", devsCSV); err != nil {
		t.Fatal(err)
	}
	version, _ := f.s.DataVersion(ctx, f.pid)
	f.fail(t, "project_models", "UPDATE")
	if _, err := f.load("dataset.devs", "id,nm_email,nm_name\nd9,z@x.io,Zed\n"); err == nil {
		t.Fatal("a load with a failing store succeeded")
	}
	f.repair(t)
	if got := f.elements(t, "attr.devs.id"); len(got) != 2 || got[0] != "a@x.io" {
		t.Fatalf("devs after a failed load: %v", got)
	}
	if v, _ := f.s.DataVersion(ctx, f.pid); v != version {
		t.Fatalf("data version %d, was %d", v, version)
	}
	res, err := f.load("dataset.devs", "id,nm_email,nm_name\nd9,z@x.io,Zed\n")
	if err != nil || res.Rows != 1 || res.DataVersion != version+1 {
		t.Fatalf("load after repair = %+v, %v", res, err)
	}
}

func TestOrphanReferences(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.manage(t, devsScript(t))
	if _, err := f.load("dataset.devs", devsCSV); err != nil {
		t.Fatal(err)
	}
	const commits = "id,f_lines,devs_id,dt_committed_on_id\nc1,1,d1,2024-01-01\n"
	if _, err := f.load("dataset.commits", "id,f_lines,dt_committed_on_id\nc1,1,2024-01-01\n"); err == nil {
		t.Fatal("a load without a reference column succeeded")
	}
	// Once devs is dropped, f_commits keeps the column until it is synchronized again; a
	// load may give it or not, and nothing checks it.
	f.manage(t, "DROP {dataset.devs} CASCADE")
	for _, csv := range []string{commits, "id,f_lines,dt_committed_on_id\nc1,1,2024-01-01\n", strings.Replace(commits, "d1", "d7", 1)} {
		if _, err := f.load("dataset.commits", csv); err != nil {
			t.Fatalf("load %q: %v", csv, err)
		}
	}
	var re *warehouse.RowError
	if _, err := f.load("dataset.commits", "id,f_lines,devs_id\nc1,1,d1\n"); !errors.As(err, &re) || re.Column != "dt_committed_on_id" {
		t.Fatalf("missing date column: %v", err)
	}
}

func TestModelCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	empty, err := f.s.Model(ctx, f.pid)
	if err != nil || len(empty.Datasets) != 0 {
		t.Fatalf("model of a new project = %+v, %v", empty, err)
	}
	f.manage(t, "CREATE DATASET {d}")
	m1, _ := f.s.Model(ctx, f.pid)
	m2, _ := f.s.Model(ctx, f.pid)
	if m1 != m2 || m1.Datasets["d"] == nil {
		t.Fatal("an unchanged model was decoded again")
	}
	f.manage(t, "DROP {d}")
	if m3, _ := f.s.Model(ctx, f.pid); m3 == m1 || m3.Datasets["d"] != nil {
		t.Fatal("the cache kept an old model")
	}
	var se *ldm.StmtError
	if _, err := f.s.Manage(ctx, f.pid, f.user, "DROP {d}"); !errors.As(err, &se) || se.Pos.Line != 1 {
		t.Fatalf("dropping a dropped dataset: %v", err)
	}
}
