package warehouse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const pid = "p0123456789abcdef"

func open(t testing.TB, opt Options) *Warehouse {
	t.Helper()
	w, err := Open(context.Background(), t.TempDir(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// model applies src to m and the steps to the warehouse, committing.
func model(t testing.TB, w *Warehouse, m *ldm.Model, src string) *ldm.Model {
	t.Helper()
	next, err := tryModel(w, m, src)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func tryModel(w *Warehouse, m *ldm.Model, src string) (*ldm.Model, error) {
	stmts, err := maql.ParseScript(src)
	if err != nil {
		return nil, err
	}
	next, steps, err := ldm.Apply(m, stmts, ldm.Options{})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	tx, err := w.Begin(ctx, pid)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := tx.Apply(ctx, steps); err != nil {
		return nil, err
	}
	return next, tx.Commit()
}

func devs(t testing.TB, w *Warehouse) *ldm.Model {
	src, err := os.ReadFile("testdata/devs.maql")
	if err != nil {
		t.Fatal(err)
	}
	return model(t, w, ldm.New(), string(src))
}

// query returns the rows of a query as strings, one line per row, fields separated by |.
func query(t testing.TB, w *Warehouse, q string) []string {
	t.Helper()
	release, err := w.acquire(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	q = strings.ReplaceAll(q, "$", ident(catalog(pid))+".")
	rows, err := w.db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

func load(w *Warehouse, m *ldm.Model, table, mode, csv string) (int64, error) {
	t := m.Tables[table]
	header, body, _ := strings.Cut(csv, "\n")
	req := LoadRequest{Table: t, Columns: strings.Split(header, ","), Data: strings.NewReader(body), Mode: mode}
	for _, c := range t.Columns {
		if c.Role != ldm.RoleReference {
			continue
		}
		at := m.Attributes[c.Object]
		ref := Reference{Column: c.Name, Dataset: at.Dataset}
		if at.DatePart == "" {
			ds := m.Datasets[at.Dataset]
			ref.Table, ref.Key = ds.Table, m.Tables[ds.Table].Key
		}
		req.References = append(req.References, ref)
	}
	p, err := w.Load(context.Background(), pid, req)
	if err != nil {
		return 0, err
	}
	return p.Rows, p.Commit()
}

func mustLoad(t testing.TB, w *Warehouse, m *ldm.Model, table, mode, csv string) {
	t.Helper()
	if _, err := load(w, m, table, mode, csv); err != nil {
		t.Fatalf("load %s: %v", table, err)
	}
}

const devsCSV = "id,nm_email,nm_name\nd2,b@x.io,Bea\nd1,a@x.io,Al\nd3,c@x.io,\n"
const commitsCSV = "id,f_lines,devs_id,dt_committed_on_id\nc1,10.5,d1,2024-01-31\nc2,3,d2,2024-02-01\nc3,1,d1,2024-02-01\nc4,2,,\n"

func TestCreateAndLoad(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	got := query(t, w, "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_catalog = 'p_"+pid+"' ORDER BY table_schema, table_name, ordinal_position")
	want := []string{
		"f_commits.id|id|BIGINT", "f_commits.id|key|VARCHAR", "f_devs.id|id|BIGINT", "f_devs.id|key|VARCHAR",
		"f_commits|id|VARCHAR", "f_commits|f_lines|DECIMAL(15,6)", "f_commits|devs_id|VARCHAR", "f_commits|dt_committed_on_id|DATE",
		"f_devs|id|VARCHAR", "f_devs|nm_email|VARCHAR", "f_devs|nm_name|VARCHAR",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("columns:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	n, err := load(w, m, "f_commits", Full, commitsCSV)
	if err != nil || n != 4 {
		t.Fatalf("load commits = %d, %v", n, err)
	}
	if got := query(t, w, "SELECT id, CAST(f_lines AS VARCHAR), devs_id, dt_committed_on_id FROM $main.f_commits ORDER BY id"); got[0] != "c1|10.500000|d1|2024-01-31 00:00:00 +0000 UTC" || got[3] != "c4|2.000000|<nil>|<nil>" {
		t.Fatalf("commits = %q", got)
	}
	// Element ids are given in key order and stay when the table is loaded again.
	if got := query(t, w, `SELECT id, key FROM $herald."f_devs.id" ORDER BY id`); !reflect.DeepEqual(got, []string{"1|d1", "2|d2", "3|d3"}) {
		t.Fatalf("lookup = %q", got)
	}
	mustLoad(t, w, m, "f_devs", Full, "id,nm_email,nm_name\nd0,z@x.io,Zed\nd2,b@x.io,Bea\n")
	if got := query(t, w, `SELECT id, key FROM $herald."f_devs.id" ORDER BY id`); !reflect.DeepEqual(got, []string{"1|d1", "2|d2", "3|d3", "4|d0"}) {
		t.Fatalf("lookup after reload = %q", got)
	}
	if got := query(t, w, "SELECT id FROM $main.f_devs ORDER BY id"); !reflect.DeepEqual(got, []string{"d0", "d2"}) {
		t.Fatalf("full load kept old rows: %q", got)
	}
	// A load rolled back leaves the table as it was; CRLF line ends are read.
	p, err := w.Load(context.Background(), pid, LoadRequest{Table: m.Tables["f_devs"], Columns: []string{"id", "nm_email", "nm_name"},
		Data: strings.NewReader("d7,g@x.io,Gil\r\nd8,h@x.io,Hal\r\n"), Mode: Full})
	if err != nil || p.Rows != 2 {
		t.Fatalf("load with CRLF = %v, %v", p, err)
	}
	if err := p.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, w, "SELECT id FROM $main.f_devs ORDER BY id"); !reflect.DeepEqual(got, []string{"d0", "d2"}) {
		t.Fatalf("rolled back load changed the table: %q", got)
	}
	// Incremental: replace d2, add d5.
	mustLoad(t, w, m, "f_devs", Incremental, "nm_name,id,nm_email\nBeatrice,d2,b@x.io\nEve,d5,e@x.io\n")
	if got := query(t, w, "SELECT id, nm_name FROM $main.f_devs ORDER BY id"); !reflect.DeepEqual(got, []string{"d0|Zed", "d2|Beatrice", "d5|Eve"}) {
		t.Fatalf("incremental load = %q", got)
	}
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	m = model(t, w, m, "CREATE FACT {fact.devs.age} AS {f_devs.f_age}; ALTER DATASET {dataset.devs} ADD {fact.devs.age}; ALTER DATATYPE {f_devs.nm_email} VARCHAR(5); SYNCHRONIZE {dataset.devs}")
	mustLoad(t, w, m, "f_devs", Full, "id,nm_email,nm_name,f_age\nd1,a@x,Al,30\nd2,b@x,Bea,40\n")
	mustLoad(t, w, m, "f_commits", Full, commitsCSV)
	cases := []struct {
		name, table, csv string
		row              int64
		column, msg      string
	}{
		{"wrong type", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,Al,30\nd2,b@x,Bea,old\n", 3, "f_age", `"old" is not a valid DECIMAL(12,2)`},
		{"too many fields", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,Al,30,9\n", 2, "", "the row has 5 fields, the header has 4"},
		{"too few fields", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,Al,30\nd2,b@x\n", 3, "", "the row has 2 fields, the header has 4"},
		{"not utf-8", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,\xff,30\n", 2, "nm_name", "not UTF-8"},
		{"too long", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,Al,30\nd2,bb@x.io,Bea,40\n", 3, "nm_email", "longer than VARCHAR(5)"},
		{"empty key", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,Al,30\n,b@x,Bea,40\n", 3, "id", "the key is empty"},
		{"duplicate key", "f_devs", "id,nm_email,nm_name,f_age\nd1,a@x,Al,30\nd2,b@x,Bea,40\nd1,c@x,Cy,50\n", 4, "id", `key "d1" is also in row 2`},
		{"unknown reference", "f_commits", "id,f_lines,devs_id,dt_committed_on_id\nc1,1,d1,2024-01-01\nc2,1,d9,2024-01-01\n", 3, "devs_id", `"d9" is not a loaded key of dataset {dataset.devs}`},
		{"bad date", "f_commits", "id,f_lines,devs_id,dt_committed_on_id\nc1,1,d1,2024-02-30\n", 2, "dt_committed_on_id", `"2024-02-30" is not a valid DATE`},
		{"early date", "f_commits", "id,f_lines,devs_id,dt_committed_on_id\nc1,1,d1,1899-12-31\n", 2, "dt_committed_on_id", "dates before 1900-01-01"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := query(t, w, "SELECT * FROM $main."+tc.table+" ORDER BY id")
			lookup := query(t, w, `SELECT * FROM $herald."`+tc.table+`.id" ORDER BY id`)
			_, err := load(w, m, tc.table, Full, tc.csv)
			var re *RowError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *RowError", err)
			}
			if re.Row != tc.row || re.Column != tc.column || !strings.Contains(re.Msg, tc.msg) {
				t.Fatalf("error %+v, want row %d column %q %q", re, tc.row, tc.column, tc.msg)
			}
			if after := query(t, w, "SELECT * FROM $main."+tc.table+" ORDER BY id"); !reflect.DeepEqual(after, before) {
				t.Fatalf("table changed: %q, was %q", after, before)
			}
			if after := query(t, w, `SELECT * FROM $herald."`+tc.table+`.id" ORDER BY id`); !reflect.DeepEqual(after, lookup) {
				t.Fatalf("lookup changed: %q, was %q", after, lookup)
			}
		})
	}
}

func TestIntegerKeys(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := model(t, w, ldm.New(), `CREATE DATASET {d};
CREATE ATTRIBUTE {a} AS KEYS {t.id} FULLSET;
ALTER DATASET {d} ADD {a};
ALTER ATTRIBUTE {a} ADD LABELS {a.name} AS {t.nm_name};
ALTER DATATYPE {t.id} BIGINT;
SYNCHRONIZE {d}`)
	if got := query(t, w, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'herald' AND table_catalog = 'p_"+pid+"'"); len(got) != 0 {
		t.Fatalf("integer key has a lookup: %q", got)
	}
	mustLoad(t, w, m, "t", Full, "id,nm_name\n20,b\n7,a\n")
	els, total, err := w.Elements(context.Background(), pid, ElementsQuery{Table: m.Tables["t"], Key: "id", Label: "nm_name"})
	if err != nil || total != 2 || !reflect.DeepEqual(els, []Element{{7, "a"}, {20, "b"}}) {
		t.Fatalf("elements = %+v, %d, %v", els, total, err)
	}
	_, err = load(w, m, "t", Full, "id,nm_name\n1,a\n-3,b\n")
	var re *RowError
	if !errors.As(err, &re) || re.Row != 3 || re.Column != "id" || !strings.Contains(re.Msg, "negative") {
		t.Fatalf("negative key: %v", err)
	}
}

func TestElements(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	mustLoad(t, w, m, "f_commits", Full, commitsCSV)
	ctx := context.Background()
	date := func(part, format string) ElementsQuery {
		return ElementsQuery{DatePart: part, DateFormat: format, DateColumns: []ldm.Column{{Table: "f_commits", Name: "dt_committed_on_id"}}}
	}
	cases := []struct {
		name  string
		q     ElementsQuery
		want  []Element
		total int64
	}{
		{"by label value", ElementsQuery{Table: m.Tables["f_devs"], Key: "id", Label: "nm_name"}, []Element{{1, "Al"}, {2, "Bea"}, {3, ""}}, 3},
		{"other label", ElementsQuery{Table: m.Tables["f_devs"], Key: "id", Label: "nm_email"}, []Element{{1, "a@x.io"}, {2, "b@x.io"}, {3, "c@x.io"}}, 3},
		{"key as label", ElementsQuery{Table: m.Tables["f_commits"], Key: "id"}, []Element{{1, "c1"}, {2, "c2"}, {3, "c3"}, {4, "c4"}}, 4},
		{"one id", ElementsQuery{Table: m.Tables["f_devs"], Key: "id", Label: "nm_name", IDs: []int64{2}}, []Element{{2, "Bea"}}, 1},
		{"page", ElementsQuery{Table: m.Tables["f_devs"], Key: "id", Label: "nm_email", Offset: 1, Limit: 1}, []Element{{2, "b@x.io"}}, 3},
		{"past the end", ElementsQuery{Table: m.Tables["f_devs"], Key: "id", Offset: 5}, nil, 3},
		{"dates", date("date", "yyyy-mm-dd"), []Element{{45321, "2024-01-31"}, {45322, "2024-02-01"}}, 2},
		{"date other format", date("date", "mm/dd/yyyy"), []Element{{45321, "01/31/2024"}, {45322, "02/01/2024"}}, 2},
		{"months", date("month", "Mon yyyy"), []Element{{202401, "Jan 2024"}, {202402, "Feb 2024"}}, 2},
		{"quarters", date("quarter", "Qq/yyyy"), []Element{{20241, "Q1/2024"}}, 1},
		{"years", date("year", "yyyy"), []Element{{2024, "2024"}}, 1},
		{"weeks", date("week", "Www/yyyy"), []Element{{202405, "W05/2024"}}, 1},
		{"weekdays", date("day_of_week", "Ddd"), []Element{{3, "Wed"}, {4, "Thu"}}, 2},
		{"months of year", date("month_of_year", "Mon"), []Element{{1, "Jan"}, {2, "Feb"}}, 2},
		{"quarters of year", date("quarter_of_year", "Qq"), []Element{{1, "Q1"}}, 1},
		{"unreferenced date dimension", ElementsQuery{DatePart: "year", DateFormat: "yyyy"}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := w.Elements(ctx, pid, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) || total != tc.total {
				t.Fatalf("elements = %+v (%d), want %+v (%d)", got, total, tc.want, tc.total)
			}
		})
	}
}

func TestDateExpressionsCoverTheModel(t *testing.T) {
	t.Parallel()
	for _, p := range ldm.DateParts {
		if _, ok := DateID(p.Name, "d"); !ok {
			t.Errorf("no id expression for date part %s", p.Name)
		}
		for _, l := range p.Labels {
			if _, ok := DateLabel(l.Format, "d"); !ok {
				t.Errorf("no label expression for date format %s", l.Format)
			}
		}
	}
}

func TestSynchronizePreserveData(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	mustLoad(t, w, m, "f_devs", Full, devsCSV)
	mustLoad(t, w, m, "f_commits", Full, "id,f_lines,devs_id,dt_committed_on_id\n1,10.5,d1,2024-01-31\n2,3,d2,2024-02-01\n")
	m = model(t, w, m, `CREATE FACT {fact.commits.files} AS {f_commits.f_files};
ALTER DATASET {dataset.commits} ADD {fact.commits.files};
ALTER DATATYPE {f_commits.id} INT;
SYNCHRONIZE {dataset.commits} PRESERVE DATA`)
	if got := query(t, w, "SELECT id, CAST(f_lines AS VARCHAR), f_files FROM $main.f_commits ORDER BY id"); !reflect.DeepEqual(got, []string{"1|10.500000|<nil>", "2|3.000000|<nil>"}) {
		t.Fatalf("preserved rows = %q", got)
	}
	if got := query(t, w, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'f_commits.id'"); got[0] != "0" {
		t.Fatal("the lookup of a key now integer is still there")
	}
	// A conversion that fails names the statement and changes nothing: the reference to
	// devs follows the new type of its key, and "d1" is no INT.
	m = model(t, w, m, "ALTER DATATYPE {f_devs.id} VARCHAR(10); SYNCHRONIZE {dataset.devs} PRESERVE DATA")
	_, err := tryModel(w, m, "ALTER DATATYPE {f_commits.f_lines} INT;\nALTER DATATYPE {f_devs.id} INT;\nSYNCHRONIZE {dataset.commits} PRESERVE DATA;\nSYNCHRONIZE {dataset.devs} PRESERVE DATA")
	var se *ldm.StmtError
	if !errors.As(err, &se) || se.Pos.Line != 3 || !strings.Contains(se.Msg, "converting column f_commits.devs_id to INT") {
		t.Fatalf("failed conversion: %v", err)
	}
	if got := query(t, w, "SELECT data_type FROM information_schema.columns WHERE table_name = 'f_commits' AND column_name = 'f_lines'"); got[0] != "DECIMAL(15,6)" {
		t.Fatalf("f_lines is %s after a rolled back script", got[0])
	}
	// Without PRESERVE DATA the table is emptied.
	model(t, w, m, "SYNCHRONIZE {dataset.devs}")
	if got := query(t, w, "SELECT count(*) FROM $main.f_devs"); got[0] != "0" {
		t.Fatalf("devs has %s rows after SYNCHRONIZE", got[0])
	}
}

func TestDropDataset(t *testing.T) {
	t.Parallel()
	w := open(t, Options{})
	m := devs(t, w)
	model(t, w, m, "DROP ALL IN {dataset.commits}")
	if got := query(t, w, "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'p_"+pid+"' ORDER BY 1"); !reflect.DeepEqual(got, []string{"f_devs", "f_devs.id"}) {
		t.Fatalf("tables = %q", got)
	}
}

func TestAttachManyProjects(t *testing.T) {
	t.Parallel()
	w := open(t, Options{MaxIdle: 1})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("p%d", i%4)
			tx, err := w.Begin(context.Background(), p)
			if err != nil {
				errs <- err
				return
			}
			defer tx.Rollback()
			if err := tx.exec(context.Background(), "CREATE TABLE IF NOT EXISTS "+tx.table(fmt.Sprintf("t%d", i))+" (a INT)"); err != nil {
				errs <- err
				return
			}
			if err := tx.Commit(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	w.mu.Lock()
	n := len(w.attached)
	w.mu.Unlock()
	if n > 1 {
		t.Fatalf("%d databases stay attached, want at most 1", n)
	}
	if _, err := w.Begin(context.Background(), "../x"); err == nil {
		t.Fatal("a bad project id was accepted")
	}
}

// TestOpenRemovesWhatACrashLeft: the spooled CSV of a load that a killed process never
// finished, and DuckDB's spill files, are gone once the warehouse opens again.
func TestOpenRemovesWhatACrashLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	left := []string{filepath.Join(dir, "tmp", "load123.csv"), filepath.Join(dir, "tmp", "duckdb_temp_storage-0.tmp")}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range left {
		if err := os.WriteFile(f, []byte("id\n1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, f := range left {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", filepath.Base(f), err)
		}
	}
}
