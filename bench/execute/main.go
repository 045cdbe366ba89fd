// Command execute measures report execution: a generated fact table (-rows sales, each
// in one of -a regions and of -b products, with an amount) is loaded into a Herald
// started in-process and, in the same run, into a DuckDB database of its own from the
// same CSV files. The report "revenue by region and product" is then executed through
// POST /svc/xtab2/executor3 and read through GET dataResult (all rows), alternating with
// the same aggregation written by hand in DuckDB SQL (all rows read into Go). SQLite
// (mattn/go-sqlite3) runs the same query on the same rows for reference. Each execution
// gets a new metric alias so that none is answered from the result cache.
//
//	go run ./bench/execute [-rows 10000000] [-a 20] [-b 500] [-runs 5] [-sqlite=true]
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/client"
)

const model = `CREATE DATASET {dataset.regions} VISUAL(TITLE "Regions");
CREATE ATTRIBUTE {attr.regions.id} VISUAL(TITLE "Region") AS KEYS {f_regions.id} FULLSET;
ALTER DATASET {dataset.regions} ADD {attr.regions.id};
ALTER ATTRIBUTE {attr.regions.id} ADD LABELS {label.regions.name} VISUAL(TITLE "Region") AS {f_regions.nm_name};
CREATE DATASET {dataset.products} VISUAL(TITLE "Products");
CREATE ATTRIBUTE {attr.products.id} VISUAL(TITLE "Product") AS KEYS {f_products.id} FULLSET;
ALTER DATASET {dataset.products} ADD {attr.products.id};
ALTER ATTRIBUTE {attr.products.id} ADD LABELS {label.products.name} VISUAL(TITLE "Product") AS {f_products.nm_name};
ALTER DATATYPE {f_products.id} INT;
CREATE DATASET {dataset.sales} VISUAL(TITLE "Sales");
CREATE ATTRIBUTE {attr.sales.id} VISUAL(TITLE "Sale") AS KEYS {f_sales.id} FULLSET;
CREATE FACT {fact.sales.amount} VISUAL(TITLE "Amount") AS {f_sales.f_amount};
ALTER DATASET {dataset.sales} ADD {attr.sales.id}, {fact.sales.amount};
ALTER ATTRIBUTE {attr.regions.id} ADD KEYS {f_sales.regions_id};
ALTER ATTRIBUTE {attr.products.id} ADD KEYS {f_sales.products_id};
ALTER DATATYPE {f_sales.id} INT;
ALTER DATATYPE {f_sales.f_amount} DECIMAL(15,2);
SYNCHRONIZE {dataset.regions}, {dataset.products}, {dataset.sales};`

// The tables of the hand-written side: the shapes Herald gives them.
var tables = []struct{ name, columns, file string }{
	{"f_regions", "{'id': 'VARCHAR', 'nm_name': 'VARCHAR'}", "regions.csv"},
	{"f_products", "{'id': 'INTEGER', 'nm_name': 'VARCHAR'}", "products.csv"},
	{"f_sales", "{'id': 'INTEGER', 'f_amount': 'DECIMAL(15,2)', 'regions_id': 'VARCHAR', 'products_id': 'INTEGER'}", "sales.csv"},
}

// byHand is the report written by hand: revenue by region and product name.
const byHand = `SELECT r.nm_name, p.nm_name, CAST(SUM(s.f_amount) AS DOUBLE) FROM f_sales s
JOIN f_regions r ON r.id = s.regions_id JOIN f_products p ON p.id = s.products_id GROUP BY 1, 2`

// byHandFirst is the same report written to aggregate before it joins the names, as
// Herald's compiler writes it.
const byHandFirst = `SELECT r.nm_name, p.nm_name, s.v FROM (SELECT regions_id, products_id, CAST(SUM(f_amount) AS DOUBLE) AS v
FROM f_sales GROUP BY 1, 2) s JOIN f_regions r ON r.id = s.regions_id JOIN f_products p ON p.id = s.products_id`

func main() {
	rows := flag.Int("rows", 10_000_000, "rows of the fact table")
	regions := flag.Int("a", 20, "regions")
	products := flag.Int("b", 500, "products")
	runs := flag.Int("runs", 5, "executions of each side")
	withSQLite := flag.Bool("sqlite", true, "also time SQLite, once")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "herald-bench-execute")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	machine()
	d := data{rows: *rows, regions: *regions, products: *products}
	start := time.Now()
	if err := d.write(dir); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d sales, %d regions, %d products: %d result rows; CSV written in %s\n", d.rows, d.regions, d.products,
		d.regions*d.products, time.Since(start).Round(time.Millisecond))

	duck, err := loadDuckDB(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer duck.Close()
	h, stop, err := startHerald(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	start = time.Now()
	if err := h.load(ctx, dir); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("loaded into Herald in %s\n", time.Since(start).Round(time.Millisecond))

	var heraldTimes, duckTimes, firstTimes []time.Duration
	for i := range *runs + 1 {
		ht, hn, err := h.execute(ctx, i)
		if err != nil {
			log.Fatal(err)
		}
		dt, dn, err := query(ctx, duck, byHand)
		if err != nil {
			log.Fatal(err)
		}
		ft, fn, err := query(ctx, duck, byHandFirst)
		if err != nil {
			log.Fatal(err)
		}
		if hn != dn || fn != dn {
			log.Fatalf("herald read %d rows, duckdb %d and %d", hn, dn, fn)
		}
		if i > 0 { // the first of each warms caches up
			heraldTimes, duckTimes, firstTimes = append(heraldTimes, ht), append(duckTimes, dt), append(firstTimes, ft)
		}
	}
	fmt.Printf("%-30s %10s %10s\n", "side", "best", "median")
	line := func(name string, t []time.Duration) {
		slices.Sort(t)
		fmt.Printf("%-30s %10s %10s\n", name, t[0].Round(time.Millisecond), t[len(t)/2].Round(time.Millisecond))
	}
	line("herald executor3 + dataResult", heraldTimes)
	line("duckdb by hand, join first", duckTimes)
	line("duckdb by hand, group first", firstTimes)
	ratio := func(a, b []time.Duration) string {
		return fmt.Sprintf("best %.2f, median %.2f", a[0].Seconds()/b[0].Seconds(), a[len(a)/2].Seconds()/b[len(b)/2].Seconds())
	}
	fmt.Printf("ratio herald / join first: %s; herald / group first: %s (target <= 2)\n",
		ratio(heraldTimes, duckTimes), ratio(heraldTimes, firstTimes))
	if *withSQLite {
		t, err := sqliteOnce(ctx, dir, d)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-30s %10s (reference, one run)\n", "sqlite by hand", t.Round(time.Millisecond))
	}
}

// machine prints what the figures were measured on.
func machine() {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if name, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	fmt.Printf("machine: %s, %d CPUs, GOMAXPROCS %d, %s/%s, %s\n", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// data is the generated sales: amounts in cents, regions r1.., products 1..
type data struct {
	rows, regions, products int
}

// each calls fn for every sale, the same ones for the same sizes.
func (d data) each(fn func(id int, cents int64, region string, product int) error) error {
	rng := rand.New(rand.NewPCG(1, 2))
	for id := 1; id <= d.rows; id++ {
		if err := fn(id, 100+rng.Int64N(100_000), fmt.Sprintf("r%d", 1+rng.IntN(d.regions)), 1+rng.IntN(d.products)); err != nil {
			return err
		}
	}
	return nil
}

func (d data) write(dir string) error {
	var regions, products strings.Builder
	regions.WriteString("id,nm_name\n")
	for i := 1; i <= d.regions; i++ {
		fmt.Fprintf(&regions, "r%d,Region %03d\n", i, i)
	}
	products.WriteString("id,nm_name\n")
	for i := 1; i <= d.products; i++ {
		fmt.Fprintf(&products, "%d,Product %05d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "regions.csv"), []byte(regions.String()), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "products.csv"), []byte(products.String()), 0o600); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "sales.csv"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id,f_amount,regions_id,products_id\n")
	err = d.each(func(id int, cents int64, region string, product int) error {
		_, err := fmt.Fprintf(w, "%d,%d.%02d,%s,%d\n", id, cents/100, cents%100, region, product)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// loadDuckDB reads the CSV files into a DuckDB database of its own.
func loadDuckDB(ctx context.Context, dir string) (*sql.DB, error) {
	db, err := sql.Open("duckdb", filepath.Join(dir, "direct.duckdb"))
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		q := fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM read_csv('%s', header = true, auto_detect = false, columns = %s)",
			t.name, filepath.Join(dir, t.file), t.columns)
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// query runs a hand-written report and reads every row.
func query(ctx context.Context, db *sql.DB, q string) (time.Duration, int, error) {
	start := time.Now()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var region, product string
		var v float64
		if err := rows.Scan(&region, &product, &v); err != nil {
			return 0, 0, err
		}
		n++
	}
	return time.Since(start), n, rows.Err()
}

// sqliteOnce loads the same sales into SQLite and times the same query once.
func sqliteOnce(ctx context.Context, dir string, d data) (time.Duration, error) {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "direct.sqlite")+"?_journal_mode=OFF&_synchronous=OFF")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		"CREATE TABLE f_regions (id TEXT PRIMARY KEY, nm_name TEXT)",
		"CREATE TABLE f_products (id INTEGER PRIMARY KEY, nm_name TEXT)",
		"CREATE TABLE f_sales (id INTEGER PRIMARY KEY, f_amount NUMERIC, regions_id TEXT, products_id INTEGER)",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return 0, err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	for i := 1; i <= d.regions; i++ {
		if _, err := tx.ExecContext(ctx, "INSERT INTO f_regions VALUES (?, ?)", fmt.Sprintf("r%d", i), fmt.Sprintf("Region %03d", i)); err != nil {
			return 0, err
		}
	}
	for i := 1; i <= d.products; i++ {
		if _, err := tx.ExecContext(ctx, "INSERT INTO f_products VALUES (?, ?)", i, fmt.Sprintf("Product %05d", i)); err != nil {
			return 0, err
		}
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO f_sales VALUES (?, ?, ?, ?)")
	if err != nil {
		return 0, err
	}
	err = d.each(func(id int, cents int64, region string, product int) error {
		_, err := ins.ExecContext(ctx, id, float64(cents)/100, region, product)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	start := time.Now()
	rows, err := db.QueryContext(ctx, strings.ReplaceAll(byHand, "CAST(SUM(s.f_amount) AS DOUBLE)", "SUM(s.f_amount)"))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return time.Since(start), rows.Err()
}

// herald is a Herald in this process with the sales project.
type herald struct {
	c      *client.Client
	url    string
	md     string // /svc/md/<pid>
	labels [2]string
	metric string
}

func startHerald(ctx context.Context, dir string) (*herald, func(), error) {
	b, stop, err := benchapp.Start(ctx, filepath.Join(dir, "herald"), nil, app.Options{})
	if err != nil {
		return nil, nil, err
	}
	return &herald{c: b.Client, url: b.App.URL()}, stop, nil
}

// load creates the project, its model, its data and the revenue metric.
func (h *herald) load(ctx context.Context, dir string) error {
	uri, err := h.c.CreateProject(ctx, "Execute bench", "")
	if err != nil {
		return err
	}
	h.md = "/svc/md/" + strings.TrimPrefix(uri, "/svc/projects/")
	if err := h.c.Do(ctx, "POST", h.md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": model}}, nil); err != nil {
		return err
	}
	for _, l := range []struct{ dataset, file string }{
		{"dataset.regions", "regions.csv"}, {"dataset.products", "products.csv"}, {"dataset.sales", "sales.csv"},
	} {
		if err := h.post(ctx, h.md+"/datasets/"+l.dataset+"/data", filepath.Join(dir, l.file)); err != nil {
			return err
		}
	}
	var ids struct {
		Identifiers []struct{ Identifier, URI string } `json:"identifiers"`
	}
	err = h.c.Do(ctx, "POST", h.md+"/identifiers", map[string]any{"identifierToUri": []string{"label.regions.name", "label.products.name"}}, &ids)
	if err != nil {
		return err
	}
	for _, id := range ids.Identifiers {
		if id.Identifier == "label.regions.name" {
			h.labels[0] = id.URI
		} else {
			h.labels[1] = id.URI
		}
	}
	var out struct{ URI string }
	err = h.c.Do(ctx, "POST", h.md+"/obj", map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Revenue"},
		"content": map[string]any{"expression": "SELECT SUM({fact.sales.amount})"}}}, &out)
	h.metric = out.URI
	return err
}

func (h *herald) post(ctx context.Context, path, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, "POST", h.url+path, f)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("User-Agent", "bench")
	resp, err := h.c.HTTPClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, body)
	}
	return nil
}

// execute runs the report through the API and reads all its rows; run makes the metric's
// alias, and so the execution, new.
func (h *herald) execute(ctx context.Context, run int) (time.Duration, int, error) {
	def := map[string]any{"format": "grid", "grid": map[string]any{
		"rows": []any{
			map[string]any{"attribute": map[string]any{"uri": h.labels[0], "alias": ""}},
			map[string]any{"attribute": map[string]any{"uri": h.labels[1], "alias": ""}},
		},
		"columns": []any{"metricGroup"},
		"metrics": []any{map[string]any{"uri": h.metric, "alias": fmt.Sprintf("Revenue %d", run)}},
	}}
	start := time.Now()
	var res struct {
		Result client.ReportResult `json:"reportResult2"`
	}
	err := h.c.Do(ctx, "POST", "/svc/xtab2/executor3", map[string]any{"report_req": map[string]any{
		"definitionContent": map[string]any{"content": def, "projectMetadata": h.md}}}, &res)
	if err != nil {
		return 0, 0, err
	}
	x, err := h.c.DataResult(ctx, res.Result.Content.DataResult)
	if err != nil {
		return 0, 0, err
	}
	return time.Since(start), len(x.Data), nil
}
