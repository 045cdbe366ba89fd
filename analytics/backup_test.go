package analytics

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// TestCopyWarehouseWhileHeld: while a project is held, its copy holds every
// committed row, a load of it waits, and the data version stays; once
// released, the load goes through.
func TestCopyWarehouseWhileHeld(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.manage(t, devsScript(t))
	if _, err := f.load("dataset.devs", devsCSV); err != nil {
		t.Fatal(err)
	}
	version, _ := f.s.DataVersion(ctx, f.pid)
	release, err := f.s.Hold(ctx, []string{f.pid, f.pid})
	if err != nil {
		t.Fatal(err)
	}
	loaded := make(chan error, 1)
	go func() {
		_, err := f.load("dataset.devs", "id,nm_email,nm_name\nd1,a@x.io,Al\nd2,b@x.io,Bea\nd3,c@x.io,Cy\n")
		loaded <- err
	}()
	path := filepath.Join(t.TempDir(), "copy.duckdb")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.s.CopyWarehouse(ctx, f.pid, out)
	if err := errors.Join(err, out.Close()); err != nil || n == 0 {
		t.Fatalf("copy: %d bytes, %v", n, err)
	}
	if v, _ := f.s.DataVersion(ctx, f.pid); v != version {
		t.Errorf("data version %d while held, was %d: a load went through", v, version)
	}
	release()
	if err := <-loaded; err != nil {
		t.Fatalf("the load after the release: %v", err)
	}
	if got := rowsIn(t, path, "f_devs"); got != 2 {
		t.Errorf("the copy holds %d devs, want the 2 committed when it was taken", got)
	}
	if _, err := f.s.CopyWarehouse(ctx, "nowarehouse", out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("copy of a project without a warehouse: %v, want os.ErrNotExist", err)
	}
}

// rowsIn counts the rows of table in the DuckDB file at path, opened on its own.
func rowsIn(t *testing.T, path, table string) int {
	t.Helper()
	c, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
