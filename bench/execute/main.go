// Command execute measures report execution: a generated fact table (-rows sales, each
// in one of -a regions and of -b products, with an amount) is loaded into a Herald
// started in-process and, in the same run, into a DuckDB database of its own from the
// same CSV files. The report "revenue by region and product" is then executed through
// POST /svc/xtab2/executor3 and read through GET dataResult (all rows, in one page),
// alternating with the same aggregation written by hand in DuckDB SQL, joining then
// grouping and grouping then joining (all rows read into Go). SQLite
// (mattn/go-sqlite3) runs the same query on the same rows once, for reference.
//
// Every run compares the results row by row: Herald's with both DuckDB queries' (and
// SQLite's): the same region and product names, and the same amounts to the cent (the
// amounts are DECIMAL(15,2) summed exactly by every side, then cast to DOUBLE). The
// command fails on the first row that differs.
//
// Herald is timed twice per run. Its result cache keys on the project, the project's
// data version and the digest of the execution's plan: the SHA-256 of the compiled SQL
// and its arguments together with the report's layout as people see it (header levels
// and their titles, metrics with their titles, i.e. aliases, and formats, the view,
// filters, chart, definition URI); a result that failed or expired is not reused. The
// uncached execution gives the metric an alias no run used before: the plan's digest
// is new, but the SQL, and so the work, is the same; the server must answer it with a
// data result URI not seen before. The cached execution repeats that request as it
// was: the server must answer it with the same data result URI, which names the result
// already computed (Herald has no metric counting cache hits; a miss creates a result
// with a new id, so the URI tells one from the other). Each is then read through
// dataResult.
//
// The table gives each side's best and median, not counting a first warm-up run, and
// the ratio of Herald's uncached execution to the faster DuckDB query (the one with the
// lower median), and how much of Herald's time is its client decoding the page's JSON
// (the labels, from the row headers, and the amounts), timed apart on the same page
// read again, so that the timed executions parse each page once. With -cpuprofile,
// -profileruns more uncached Herald executions are then run under the CPU profiler.
//
//	go run ./bench/execute [-rows 10000000] [-a 20] [-b 500] [-runs 5] [-sqlite=true] [-cpuprofile file [-profileruns 10]]
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/bench/internal/revenue"
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
	cpuProfile := flag.String("cpuprofile", "", "after the timed runs, write a CPU profile of -profileruns more uncached Herald executions to this file")
	profileRuns := flag.Int("profileruns", 10, "uncached Herald executions under -cpuprofile")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "herald-bench-execute")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	benchapp.Header(os.Stdout, "execute")
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

	t, err := measure(ctx, h, duck, *runs)
	if err != nil {
		log.Fatal(err)
	}
	t.print()
	if *withSQLite {
		if err := sqliteReference(ctx, dir, d, t.want); err != nil {
			log.Fatal(err)
		}
	}
	if *cpuProfile != "" {
		if err := profile(ctx, h, *cpuProfile, *profileRuns); err != nil {
			log.Fatal(err)
		}
	}
}

// timings are the durations of each side's timed executions, and the result they all
// gave.
type timings struct {
	uncached, cached, joinFirst, groupFirst []time.Duration
	// decode is, per run, the time the client takes to decode Herald's page.
	decode []time.Duration
	want   revenue.Result
}

// measure runs each side runs+1 times, one after the other in every round; the first
// round warms caches up and is not timed. Every result is compared with Herald's
// uncached one, which is compared with DuckDB's, and every cached execution must be
// answered from the result the uncached one just computed.
func measure(ctx context.Context, h *herald, duck *sql.DB, runs int) (*timings, error) {
	t := &timings{}
	seen := map[string]bool{}
	for i := range runs + 1 {
		alias := fmt.Sprintf("Revenue %d", i)
		u, err := h.execute(ctx, alias)
		if err != nil {
			return nil, err
		}
		if seen[u.uri] {
			return nil, fmt.Errorf("the uncached execution %d was answered from the cached result %s", i, u.uri)
		}
		seen[u.uri] = true
		c, err := h.execute(ctx, alias)
		if err != nil {
			return nil, err
		}
		if c.uri != u.uri {
			return nil, fmt.Errorf("the repeated execution %d computed a new result %s instead of answering %s", i, c.uri, u.uri)
		}
		got := u.rows
		jt, join, err := query(ctx, duck, byHand)
		if err != nil {
			return nil, err
		}
		gt, group, err := query(ctx, duck, byHandFirst)
		if err != nil {
			return nil, err
		}
		if err := revenue.Same(got, "herald", join, "duckdb join first"); err != nil {
			return nil, err
		}
		for _, o := range []struct {
			r    revenue.Result
			name string
		}{{c.rows, "herald cached"}, {group, "duckdb group first"}} {
			if err := revenue.Same(o.r, o.name, got, "herald"); err != nil {
				return nil, err
			}
		}
		t.want = got
		if i > 0 {
			t.uncached, t.cached = append(t.uncached, u.took), append(t.cached, c.took)
			d, err := h.decodeTime(ctx, u.uri)
			if err != nil {
				return nil, err
			}
			t.decode = append(t.decode, d)
			t.joinFirst, t.groupFirst = append(t.joinFirst, jt), append(t.groupFirst, gt)
		}
	}
	return t, nil
}

// print writes the table of best and median times and the ratio of Herald's uncached
// execution to the faster hand-written query (the one with the lower median).
func (t *timings) print() {
	fmt.Printf("results equal in every run: %d rows, amounts equal to the cent\n", len(t.want))
	fmt.Printf("%-40s %10s %10s\n", "side", "best", "median")
	for _, s := range []struct {
		name string
		d    []time.Duration
	}{
		{"herald executor3 + dataResult, uncached", t.uncached},
		{"herald executor3 + dataResult, cached", t.cached},
		{"duckdb by hand, join then group", t.joinFirst},
		{"duckdb by hand, group then join", t.groupFirst},
	} {
		slices.Sort(s.d)
		fmt.Printf("%-40s %10s %10s\n", s.name, best(s.d).Round(time.Millisecond), median(s.d).Round(time.Millisecond))
	}
	fastest, name := t.joinFirst, "join then group"
	if median(t.groupFirst) < median(t.joinFirst) {
		fastest, name = t.groupFirst, "group then join"
	}
	fmt.Printf("herald uncached / fastest duckdb (%s): best %.2f, median %.2f (target median <= 1.3)\n", name,
		best(t.uncached).Seconds()/best(fastest).Seconds(), median(t.uncached).Seconds()/median(fastest).Seconds())
	benchapp.Verdict{
		Target:   "report execution ≤ 1.3× hand-written DuckDB SQL, medians, values equal",
		Baseline: fmt.Sprintf("DuckDB by hand (%s): median %v of %d", name, median(fastest).Round(time.Millisecond), len(fastest)),
		Figure:   fmt.Sprintf("Herald, uncached: median %v of %d", median(t.uncached).Round(time.Millisecond), len(t.uncached)),
		Ratio:    median(t.uncached).Seconds() / median(fastest).Seconds(), Limit: 1.3,
	}.Print(os.Stdout)
	fmt.Printf("herald cached / uncached: median %.2f\n", median(t.cached).Seconds()/median(t.uncached).Seconds())
	slices.Sort(t.decode)
	fmt.Printf("of herald's time, the client decoding the page's JSON: best %s, median %s\n",
		best(t.decode).Round(100*time.Microsecond), median(t.decode).Round(100*time.Microsecond))
}

// best and median of sorted durations.
func best(d []time.Duration) time.Duration   { return d[0] }
func median(d []time.Duration) time.Duration { return d[len(d)/2] }

// profile writes a CPU profile of runs uncached Herald executions.
func profile(ctx context.Context, h *herald, path string, runs int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	for i := range runs {
		if _, err := h.execute(ctx, fmt.Sprintf("Profiled revenue %d", i)); err != nil {
			pprof.StopCPUProfile()
			return err
		}
	}
	pprof.StopCPUProfile()
	fmt.Printf("CPU profile of %d uncached herald executions written to %s\n", runs, path)
	return f.Close()
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
func query(ctx context.Context, db *sql.DB, q string) (time.Duration, revenue.Result, error) {
	start := time.Now()
	r, err := revenue.Scan(ctx, db, q)
	return time.Since(start), r, err
}

// sqliteReference times the report in SQLite once and checks its result.
func sqliteReference(ctx context.Context, dir string, d data, want revenue.Result) error {
	t, got, err := sqliteOnce(ctx, dir, d)
	if err != nil {
		return err
	}
	if err := revenue.Same(got, "sqlite", want, "herald"); err != nil {
		return err
	}
	fmt.Printf("%-40s %10s (reference, one run; result equal)\n", "sqlite by hand", t.Round(time.Millisecond))
	return nil
}

// sqliteOnce loads the same sales into SQLite and times the same query once.
func sqliteOnce(ctx context.Context, dir string, d data) (time.Duration, revenue.Result, error) {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "direct.sqlite")+"?_journal_mode=OFF&_synchronous=OFF")
	if err != nil {
		return 0, nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := sqliteLoad(ctx, db, d); err != nil {
		return 0, nil, err
	}
	return query(ctx, db, strings.ReplaceAll(byHand, "CAST(SUM(s.f_amount) AS DOUBLE)", "SUM(s.f_amount)"))
}

// sqliteLoad creates the tables in SQLite and inserts the sales.
func sqliteLoad(ctx context.Context, db *sql.DB, d data) error {
	for _, s := range []string{
		"CREATE TABLE f_regions (id TEXT PRIMARY KEY, nm_name TEXT)",
		"CREATE TABLE f_products (id INTEGER PRIMARY KEY, nm_name TEXT)",
		"CREATE TABLE f_sales (id INTEGER PRIMARY KEY, f_amount NUMERIC, regions_id TEXT, products_id INTEGER)",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i := 1; i <= d.regions; i++ {
		if _, err := tx.ExecContext(ctx, "INSERT INTO f_regions VALUES (?, ?)", fmt.Sprintf("r%d", i), fmt.Sprintf("Region %03d", i)); err != nil {
			return err
		}
	}
	for i := 1; i <= d.products; i++ {
		if _, err := tx.ExecContext(ctx, "INSERT INTO f_products VALUES (?, ?)", i, fmt.Sprintf("Product %05d", i)); err != nil {
			return err
		}
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO f_sales VALUES (?, ?, ?, ?)")
	if err != nil {
		return err
	}
	err = d.each(func(id int, cents int64, region string, product int) error {
		_, err := ins.ExecContext(ctx, id, float64(cents)/100, region, product)
		return err
	})
	if err != nil {
		return err
	}
	return tx.Commit()
}
