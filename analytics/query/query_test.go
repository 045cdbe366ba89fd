package query

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/analytics/warehouse"
)

var update = flag.Bool("update", false, "rewrite the golden SQL under testdata/golden")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const pid = "p1"

// fixture is the model of testdata/sales.maql with its objects, and named metrics.
type fixture struct {
	model   *ldm.Model
	objects map[string]Object
	uris    map[string]string // identifier -> URI
}

func newFixture(t testing.TB) (*fixture, []ldm.Step) {
	t.Helper()
	src, err := os.ReadFile("testdata/sales.maql")
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := maql.ParseScript(string(src))
	if err != nil {
		t.Fatal(err)
	}
	m, steps, err := ldm.Apply(ldm.New(), stmts, ldm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{model: m, objects: map[string]Object{}, uris: map[string]string{}}
	for _, o := range m.Objects() {
		f.add(o.Identifier, Object{Category: string(o.Kind), Identifier: o.Identifier})
	}
	for _, nm := range [][2]string{
		{"m.revenue", "SELECT SUM({fact.sales.amount})"},
		{"m.orders", "SELECT COUNT({attr.sales.id})"},
		{"m.aov", "SELECT {m.revenue} / {m.orders}"},
		{"m.share", "SELECT {m.revenue} / (SELECT {m.revenue} BY ALL {attr.regions.id})"},
	} {
		f.metric(t, nm[0], nm[1])
	}
	return f, steps
}

func (f *fixture) add(ident string, o Object) string {
	uri := "/svc/md/" + pid + "/obj/" + strconv.Itoa(len(f.uris)+1)
	f.uris[ident] = uri
	f.objects[uri] = o
	return uri
}

// rewrite replaces the identifiers of a metric or filter by the fixture's URIs.
func (f *fixture) rewrite(t testing.TB) func(maql.Ref) (maql.Ref, error) {
	return func(r maql.Ref) (maql.Ref, error) {
		if r.URI != "" {
			return r, nil
		}
		uri, ok := f.uris[r.Identifier]
		if !ok {
			t.Fatalf("no object %s", r)
		}
		return maql.Ref{URI: uri}, nil
	}
}

func (f *fixture) metric(t testing.TB, ident, expr string) string {
	t.Helper()
	m, err := maql.ParseMetric(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	if err := m.Rewrite(f.rewrite(t)); err != nil {
		t.Fatal(err)
	}
	return f.add(ident, Object{Category: CategoryMetric, Identifier: ident, Metric: m})
}

// element writes the URI of an element of an attribute or label.
func (f *fixture) element(ident string, id int64) string {
	return "[" + f.uris[ident] + "/elements?id=" + strconv.FormatInt(id, 10) + "]"
}

// tcase is a report: attributes by identifier, metrics as expressions, filters.
type tcase struct {
	name    string
	attrs   []string
	metrics []string
	filters []string
	want    []string // rows as "id|label|...|metric" sorted; nil: not checked
}

func (f *fixture) request(t testing.TB, tc tcase) *Request {
	t.Helper()
	req := &Request{Project: pid, Model: f.model, Objects: f.objects}
	for i, a := range tc.attrs {
		req.Attributes = append(req.Attributes, Part{URI: f.uris[a], Field: fmt.Sprintf("attributes[%d]", i)})
	}
	for i, m := range tc.metrics {
		uri := f.metric(t, fmt.Sprintf("%s.%d", tc.name, i), m)
		req.Metrics = append(req.Metrics, Part{URI: uri, Field: fmt.Sprintf("metrics[%d]", i)})
	}
	for i, src := range tc.filters {
		flt, err := maql.ParseFilter(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if err := flt.Rewrite(f.rewrite(t)); err != nil {
			t.Fatal(err)
		}
		req.Filters = append(req.Filters, Filter{Cond: flt.Cond, Field: fmt.Sprintf("filters[%d]", i)})
	}
	return req
}

func cases(f *fixture) []tcase {
	return []tcase{
		{name: "one_number", metrics: []string{"SELECT {m.revenue}"}, want: []string{"55"}},
		{name: "sum_by_region", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue}"},
			want: []string{"1|East|35.5", "2|West|7.5"}},
		{name: "count_by_channel", attrs: []string{"attr.sales.channel"}, metrics: []string{"SELECT {m.orders}", "SELECT {m.aov}"},
			want: []string{"1|shop|3|13.166666666666666", "2|web|3|5.166666666666667"}},
		{name: "two_attributes", attrs: []string{"label.stores.name", "sold_on.year"}, metrics: []string{"SELECT {m.revenue}", "SELECT SUM({fact.sales.qty})"},
			want: []string{"1|Downtown|2024|2024|10.5|1", "1|Downtown|2025|2025|5|1", "2|Airport|2024|2024|20|2", "3|Harbour|2024|2024|7.5|4"}},
		{name: "month_label", attrs: []string{"sold_on.month.mmmyyyy"}, metrics: []string{"SELECT {m.revenue}"},
			want: []string{"202401|Jan 2024|18", "202402|Feb 2024|20", "202403|Mar 2024|12", "202503|Mar 2025|5"}},
		{name: "filter_in_elements", attrs: []string{"label.stores.city"}, metrics: []string{"SELECT {m.revenue}"},
			filters: []string{"{label.stores.name} IN (" + f.element("label.stores.name", 1) + ", " + f.element("attr.stores.id", 3) + ")"},
			want:    []string{"1|Brno|15.5", "3|Brno|7.5"}},
		{name: "filter_not_in_text", attrs: []string{"label.stores.name"}, metrics: []string{"SELECT {m.revenue}"},
			filters: []string{`{label.stores.city} NOT IN ("Praha")`, `{sold_on.year} = 2024`},
			want:    []string{"1|Downtown|10.5", "3|Harbour|7.5"}},
		{name: "filter_own_table_text", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue}"},
			filters: []string{`{attr.sales.channel} = "web" OR {label.regions.name} <> "East"`},
			want:    []string{"1|East|15.5", "2|West|7.5"}},
		{name: "where_per_metric", attrs: []string{"label.regions.name"},
			metrics: []string{"SELECT {m.revenue}", `SELECT {m.revenue} WHERE {label.stores.city} = "Brno"`, `SELECT COUNT({attr.sales.id}) WHERE {attr.sales.channel} IN ("web")`},
			want:    []string{"1|East|35.5|15.5|2", "2|West|7.5|7.5|1"}},
		{name: "share_by_all", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue}", "SELECT {m.share}"},
			want: []string{"1|East|35.5|0.6454545454545455", "2|West|7.5|0.13636363636363635"}},
		{name: "share_within_region", attrs: []string{"label.regions.name", "label.stores.name"},
			metrics: []string{"SELECT {m.revenue} / (SELECT {m.revenue} BY {attr.regions.id})"},
			want:    []string{"1|East|1|Downtown|0.43661971830985913", "1|East|2|Airport|0.5633802816901409", "2|West|3|Harbour|1"}},
		{name: "by_level_derived", attrs: []string{"label.stores.name"}, metrics: []string{"SELECT {m.revenue}", "SELECT SUM({fact.sales.amount}) BY {attr.regions.id}"},
			want: []string{"1|Downtown|15.5|35.5", "2|Airport|20|35.5", "3|Harbour|7.5|7.5"}},
		{name: "by_level_date", attrs: []string{"sold_on.month"}, metrics: []string{"SELECT {m.revenue}", "SELECT {m.revenue} BY {sold_on.year}"},
			want: []string{"202401|Jan 2024|18|50", "202402|Feb 2024|20|50", "202403|Mar 2024|12|50", "202503|Mar 2025|5|5"}},
		{name: "all_other_dimensions", attrs: []string{"label.regions.name", "sold_on.year"}, metrics: []string{"SELECT {m.revenue}", "SELECT {m.revenue} BY {attr.regions.id}, ALL IN ALL OTHER DIMENSIONS"},
			want: []string{"1|East|2024|2024|30.5|35.5", "1|East|2025|2025|5|35.5", "2|West|2024|2024|7.5|7.5"}},
		{name: "only_coarse", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue} BY ALL {attr.regions.id}"},
			want: []string{"1|East|55", "2|West|55"}},
		{name: "two_fact_tables", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue} / SUM({fact.targets.amount})", "SELECT SUM({fact.targets.amount})"},
			want: []string{"1|East|0.29583333333333334|120", "2|West|0.15|50"}},
		{name: "functions", metrics: []string{"SELECT AVG({fact.sales.amount})", "SELECT MIN({fact.sales.amount}) + MAX({fact.sales.qty})",
			"SELECT MEDIAN({fact.sales.qty})", "SELECT IFNULL((SELECT SUM({fact.sales.amount}) WHERE {attr.sales.channel} = \"none\"), -1)",
			"SELECT SUM({fact.sales.amount} * {fact.sales.qty}) / 2", "SELECT -SUM({fact.sales.qty}) * 0"},
			want: []string{"11|8|1.5|-1|51|-0"}},
		{name: "attributes_only", attrs: []string{"label.stores.city", "attr.stores.kind"}, filters: []string{`{attr.stores.kind} = "mall"`},
			want: []string{"1|Brno|2|mall", "3|Brno|2|mall"}},
		{name: "empty", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue}"}, filters: []string{`{label.regions.name} = "North"`},
			want: []string{}},
		{name: "injection_is_data", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {m.revenue}"},
			filters: []string{`{label.regions.name} IN ("'); DROP TABLE f_sales; --", "East")`}, want: []string{"1|East|35.5"}},
	}
}

func TestCompileGolden(t *testing.T) {
	t.Parallel()
	f, steps := newFixture(t)
	wh := openWarehouse(t, f.model, steps)
	for _, tc := range cases(f) {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Compile(f.request(t, tc))
			if err != nil {
				t.Fatal(err)
			}
			got := q.SQL + "\n-- args: " + fmt.Sprintf("%#v", q.Args) + "\n"
			path := filepath.Join("testdata", "golden", tc.name+".sql")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("SQL differs from %s (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			rows := run(t, wh, q)
			if tc.want != nil && !slices.Equal(rows, tc.want) {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	f, _ := newFixture(t)
	for _, tc := range []struct {
		tcase
		field, msg string
	}{
		{tcase{name: "unreachable", attrs: []string{"label.stores.name"}, metrics: []string{"SELECT SUM({fact.targets.amount})"}},
			"metrics[0]", "attribute {attr.stores.id} cannot be reached from the dataset {dataset.targets}"},
		{tcase{name: "filter_unreachable", metrics: []string{"SELECT SUM({fact.targets.amount})"}, filters: []string{`{attr.sales.channel} = "web"`}},
			"metrics[0]", "attribute {attr.sales.channel} cannot be reached"},
		{tcase{name: "wrong_element", metrics: []string{"SELECT {m.revenue}"}, filters: []string{"{attr.stores.id} IN (" + f.element("attr.regions.id", 1) + ")"}},
			"filters[0]", "is an element of {attr.regions.id}, not of {attr.stores.id}"},
		{tcase{name: "lookup_order", metrics: []string{"SELECT {m.revenue}"}, filters: []string{"{attr.stores.id} > " + f.element("attr.stores.id", 1)}},
			"filters[0]", "compare only with = and <>"},
		{tcase{name: "fact_outside", metrics: []string{"SELECT {m.revenue} + {fact.sales.qty}"}},
			"metrics[0]", "not a metric"},
		{tcase{name: "attr_metric", attrs: []string{"fact.sales.qty"}, metrics: []string{"SELECT {m.revenue}"}},
			"attributes[0]", "is not an attribute or a label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(f.request(t, tc.tcase))
			var e *Error
			if !errors.As(err, &e) || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("error %v, want %s: ...%s...", err, tc.field, tc.msg)
			}
		})
	}
}

// openWarehouse creates the fixture's tables and loads a few rows.
func openWarehouse(t testing.TB, m *ldm.Model, steps []ldm.Step) *warehouse.Warehouse {
	t.Helper()
	ctx := context.Background()
	wh, err := warehouse.Open(ctx, t.TempDir(), warehouse.Options{Config: warehouse.Config{Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	tx, err := wh.Begin(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Apply(ctx, steps); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ table, csv string }{
		{"f_regions", "id,nm_name\nr1,East\nr2,West\nr3,North\n"},
		{"f_stores", "id,nm_name,nm_city,kind,regions_id\ns1,Downtown,Brno,mall,r1\ns2,Airport,Praha,kiosk,r1\ns3,Harbour,Brno,mall,r2\n"},
		{"f_sales", "id,channel,f_amount,f_qty,stores_id,dt_sold_on_id\n1,web,10.50,1,s1,2024-01-31\n2,shop,20,2,s2,2024-02-01\n" +
			"3,web,5,1,s1,2025-03-01\n4,shop,7.5,3,s3,2024-01-15\n5,web,,1,s3,2024-02-20\n6,shop,12,2,,2024-03-01\n"},
		{"f_targets", "id,regions_id,f_amount\n1,r1,100\n2,r2,50\n3,r1,20\n"},
	} {
		header, body, _ := strings.Cut(l.csv, "\n")
		p, err := wh.Load(ctx, pid, warehouse.LoadRequest{Table: m.Tables[l.table], Columns: strings.Split(header, ","),
			Data: strings.NewReader(body), Mode: warehouse.Full})
		if err != nil {
			t.Fatalf("load %s: %v", l.table, err)
		}
		if err := p.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	return wh
}

// run executes q and returns its rows as "a0|l0|...|m0|..." in order.
func run(t testing.TB, wh *warehouse.Warehouse, q *Query) []string {
	t.Helper()
	out := []string{}
	err := wh.Query(context.Background(), pid, q.SQL, q.Args, func(rows *sql.Rows) error {
		for rows.Next() {
			ids := make([]sql.NullInt64, len(q.Attributes))
			labels := make([]sql.NullString, len(q.Attributes))
			vals := make([]sql.NullFloat64, q.Metrics)
			var dest []any
			for i := range ids {
				dest = append(dest, &ids[i], &labels[i])
			}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			var fields []string
			for i := range ids {
				fields = append(fields, strconv.FormatInt(ids[i].Int64, 10), labels[i].String)
			}
			for _, v := range vals {
				if v.Valid {
					fields = append(fields, strconv.FormatFloat(v.Float64, 'f', -1, 64))
				} else {
					fields = append(fields, "")
				}
			}
			out = append(out, strings.Join(fields, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, q.SQL)
	}
	slices.Sort(out)
	return out
}

// TestDoublingChainCompilesOnce builds metrics where each adds the one below to itself,
// 40 levels deep: each is compiled once into a shared column, so the SQL grows with the
// chain's length, not with 2^40, and DuckDB computes 2^40 times the base.
func TestDoublingChainCompilesOnce(t *testing.T) {
	t.Parallel()
	f, steps := newFixture(t)
	prev := "m.revenue"
	for k := 1; k <= 30; k++ {
		name := fmt.Sprintf("m.double%d", k)
		f.metric(t, name, "SELECT {"+prev+"} + {"+prev+"}")
		prev = name
	}
	tc := tcase{name: "chain", attrs: []string{"label.regions.name"}, metrics: []string{"SELECT {" + prev + "}"}}
	q, err := Compile(f.request(t, tc))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.SQL) > 8<<10 {
		t.Fatalf("a 30-level chain compiles to %d bytes of SQL", len(q.SQL))
	}
	wh := openWarehouse(t, f.model, steps)
	want := []string{"1|East|" + strconv.FormatFloat(35.5*(1<<30), 'f', -1, 64), "2|West|" + strconv.FormatFloat(7.5*(1<<30), 'f', -1, 64)}
	if got := run(t, wh, q); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// TestOversizeQueryNamesTheMetric refuses a report whose metrics compile to more SQL than
// the cap, naming the request field and the metric.
func TestOversizeQueryNamesTheMetric(t *testing.T) {
	t.Parallel()
	f, _ := newFixture(t)
	var b strings.Builder
	b.WriteString("SELECT {m.revenue}")
	for i := range 2000 {
		fmt.Fprintf(&b, " + %d", i)
	}
	req := f.request(t, tcase{name: "huge", metrics: []string{b.String()}})
	req.MaxSQL = 8 << 10
	_, err := Compile(req)
	var e *Error
	if !errors.As(err, &e) || e.Field != "metrics[0]" || !strings.Contains(e.Msg, "{huge.0} is too complex") {
		t.Fatalf("error %v, want metrics[0]: {huge.0} is too complex", err)
	}
}
