package warehouse

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/ldm"
)

// dumpAll dumps every table of pid into a fresh folder inside the warehouse.
func dumpAll(t *testing.T, w *Warehouse, keep func(schema, name string) bool) []DumpedTable {
	t.Helper()
	dir, err := os.MkdirTemp(w.TempDir(), "dump")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tables, err := w.Dump(context.Background(), pid, dir, keep)
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

func TestDumpAndRestore(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	mustLoad(t, w, m, "f_commits", Full, commitsCSV)

	tables := dumpAll(t, w, nil)
	var names []string
	rows := map[string]int64{}
	for _, d := range tables {
		names = append(names, d.Schema+"."+d.Name)
		rows[d.Schema+"."+d.Name] = d.Rows
		if !strings.HasPrefix(d.Path, w.TempDir()) {
			t.Errorf("%s written to %s, outside the warehouse", d.Name, d.Path)
		}
	}
	want := []string{"herald.f_commits.id", "herald.f_devs.id", "main.f_commits", "main.f_devs"}
	if !slices.Equal(names, want) {
		t.Fatalf("dumped %v, want %v", names, want)
	}
	if rows["main.f_commits"] != 4 || rows["main.f_devs"] != 3 || rows["herald.f_devs.id"] != 3 {
		t.Fatalf("rows %v", rows)
	}

	// Restore into a second project whose tables the model creates empty.
	const other = "q0123456789abcdef"
	ctx := context.Background()
	tx, err := w.Begin(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	var steps []ldm.Step
	for _, name := range []string{"f_devs", "f_commits"} {
		steps = append(steps, ldm.Step{New: m.Tables[name]})
	}
	if err := tx.Apply(ctx, steps); err != nil {
		t.Fatal(err)
	}
	for _, d := range tables {
		n, err := tx.Restore(ctx, d.Schema, d.Name, d.Path)
		if err != nil {
			t.Fatal(err)
		}
		if n != d.Rows {
			t.Errorf("%s: restored %d rows, dumped %d", d.Name, n, d.Rows)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT * FROM $main.f_commits ORDER BY id`,
		`SELECT * FROM $main.f_devs ORDER BY id`,
		`SELECT * FROM $herald."f_devs.id" ORDER BY id`,
		`SELECT * FROM $herald."f_commits.id" ORDER BY id`,
	} {
		src := query(t, w, q)
		got := queryIn(t, w, other, q)
		if len(src) == 0 || !slices.Equal(got, src) {
			t.Errorf("%s:\nrestored %v\nsource   %v", q, got, src)
		}
	}
}

func TestDumpKeepsWhatIsAsked(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	tables := dumpAll(t, w, func(schema, name string) bool { return schema == SchemaMain && name == "f_devs" })
	if len(tables) != 1 || tables[0].Name != "f_devs" || tables[0].Rows != 3 {
		t.Fatalf("dumped %+v", tables)
	}
}

func TestRestoreRefusesUnknownSchemaAndMissingTable(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	tables := dumpAll(t, w, nil)
	ctx := context.Background()
	tx, err := w.Begin(ctx, "r0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Restore(ctx, "temp", "x", tables[0].Path); err == nil {
		t.Error("restore into schema temp: no error")
	}
	if _, err := tx.Restore(ctx, SchemaMain, "f_devs", tables[0].Path); err == nil || !strings.Contains(err.Error(), "f_devs") {
		t.Errorf("restore into a missing table: %v", err)
	}
	if _, err := tx.Restore(ctx, SchemaMain, "f_devs", filepath.Join(w.TempDir(), "none.parquet")); err == nil {
		t.Error("restore from a missing file: no error")
	}
}

func TestTablesAndIntegrity(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	mustLoad(t, w, m, "f_commits", Full, commitsCSV)
	ctx := context.Background()

	infos, err := w.Tables(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	var commits TableInfo
	for _, ti := range infos {
		if ti.Schema == SchemaMain && ti.Name == "f_commits" {
			commits = ti
		}
	}
	lines, ok := commits.Column("f_lines")
	if typ, _ := m.Tables["f_commits"].Column("f_lines"); !ok || lines.Type != "DECIMAL(15,6)" || SQLType(typ.Type) != lines.Type {
		t.Fatalf("f_commits.f_lines: %+v %v (table %+v)", lines, ok, commits)
	}

	kp, err := w.CheckKey(ctx, pid, "f_devs", "id")
	if err != nil || kp != (KeyProblems{}) {
		t.Fatalf("clean key: %+v %v", kp, err)
	}
	n, _, err := w.MissingReferences(ctx, pid, "f_commits", "devs_id", "f_devs", "id")
	if err != nil || n != 0 {
		t.Fatalf("clean references: %d %v", n, err)
	}

	// A full load of the developers without d2 leaves commit c2 pointing nowhere.
	mustLoad(t, w, m, "f_devs", Full, "id,nm_email,nm_name\nd1,a@x.io,Al\n")
	n, example, err := w.MissingReferences(ctx, pid, "f_commits", "devs_id", "f_devs", "id")
	if err != nil || n != 1 || example != "d2" {
		t.Fatalf("missing references: %d %q %v", n, example, err)
	}

	exec(t, w, `INSERT INTO $main.f_devs (id, nm_email) VALUES ('d1', 'again'), ('d1', 'thrice'), (NULL, 'nobody')`)
	kp, err = w.CheckKey(ctx, pid, "f_devs", "id")
	if err != nil || kp != (KeyProblems{Nulls: 1, Duplicates: 1, Example: "d1"}) {
		t.Fatalf("broken key: %+v %v", kp, err)
	}
}

// queryIn is query on another project's database.
func queryIn(t *testing.T, w *Warehouse, project, q string) []string {
	t.Helper()
	release, err := w.acquire(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	return query(t, w, strings.ReplaceAll(q, "$", ident(catalog(project))+"."))
}

// exec runs a statement on the project's database, as corruption would.
func exec(t *testing.T, w *Warehouse, q string) {
	t.Helper()
	release, err := w.acquire(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := w.db.Exec(strings.ReplaceAll(q, "$", ident(catalog(pid))+".")); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
