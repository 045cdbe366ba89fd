// Command load measures data loading: a generated CSV of sales rows (id INT, amount
// DECIMAL(15,2), a reference to one of 1,000 stores, a date) posted to
// /svc/md/<pid>/datasets/dataset.sales/data on a Herald started in-process, beside
// DuckDB's own read_csv of the same file into a table of the same shape, in the same run.
// Each side loads the file -runs times, alternating, and the best and median times are
// printed, since other work on the machine makes single runs noisy. The file is generated
// in a temporary folder and removed afterwards.
//
//	go run ./bench/load [-rows 10000000] [-runs 3]
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/client"
)

// The table DuckDB loads directly: the shape Herald gives f_sales.
const direct = `CREATE TABLE f_sales (id INTEGER, f_amount DECIMAL(15,2), stores_id VARCHAR, dt_sold_on_id DATE)`

const columns = `{'id': 'INTEGER', 'f_amount': 'DECIMAL(15,2)', 'stores_id': 'VARCHAR', 'dt_sold_on_id': 'DATE'}`

func main() {
	rows := flag.Int("rows", 10_000_000, "rows of the generated CSV")
	runs := flag.Int("runs", 3, "loads of each side")
	flag.Parse()
	benchapp.Header(os.Stdout, "load")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "herald-bench-load")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	path := filepath.Join(dir, "sales.csv")
	size, err := generate(path, *rows)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rows, %.0f MB CSV\n", *rows, float64(size)/1e6)

	duck, err := openDuckDB(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer duck.Close()
	herald, stop, err := startHerald(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	var duckTimes, heraldTimes []time.Duration
	for range *runs {
		d, err := loadDuckDB(ctx, duck, path)
		if err != nil {
			log.Fatal(err)
		}
		h, err := herald.load(ctx, path)
		if err != nil {
			log.Fatal(err)
		}
		duckTimes, heraldTimes = append(duckTimes, d), append(heraldTimes, h)
	}
	slices.Sort(duckTimes)
	slices.Sort(heraldTimes)
	fmt.Printf("%-18s %10s %12s %10s %12s\n", "loader", "best s", "best rows/s", "median s", "median rows/s")
	for _, r := range []struct {
		name  string
		times []time.Duration
	}{{"duckdb read_csv", duckTimes}, {"herald POST data", heraldTimes}} {
		best, median := r.times[0], r.times[len(r.times)/2]
		fmt.Printf("%-18s %10.2f %12.0f %10.2f %12.0f\n", r.name, best.Seconds(), float64(*rows)/best.Seconds(),
			median.Seconds(), float64(*rows)/median.Seconds())
	}
	fmt.Printf("ratio herald/duckdb throughput: best %.2f, median %.2f\n",
		duckTimes[0].Seconds()/heraldTimes[0].Seconds(), duckTimes[len(duckTimes)/2].Seconds()/heraldTimes[len(heraldTimes)/2].Seconds())
	fmt.Println("no target: the ratio is recorded, not judged")
}

// generate writes the sales CSV: sequential ids, amounts, 1,000 stores, dates of 2024.
func generate(path string, rows int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "id,f_amount,stores_id,dt_sold_on_id")
	for i := range rows {
		fmt.Fprintf(w, "%d,%d.%02d,s%d,2024-%02d-%02d\n", i+1, i%10000, i%100, i%1000, i%12+1, i%28+1)
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

func openDuckDB(ctx context.Context, dir string) (*sql.DB, error) {
	return sql.Open("duckdb", filepath.Join(dir, "direct.duckdb"))
}

// loadDuckDB times DuckDB reading the file into a new table of its own database file.
func loadDuckDB(ctx context.Context, db *sql.DB, path string) (time.Duration, error) {
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS f_sales"); err != nil {
		return 0, err
	}
	if _, err := db.ExecContext(ctx, direct); err != nil {
		return 0, err
	}
	start := time.Now()
	_, err := db.ExecContext(ctx, "INSERT INTO f_sales SELECT * FROM read_csv('"+path+"', header = true, auto_detect = false, columns = "+columns+")")
	return time.Since(start), err
}

// herald is a Herald in this process with the sales model and the stores loaded.
type herald struct {
	c    *client.Client
	base string // URL of /svc/md/<pid>
}

func startHerald(ctx context.Context, dir string) (*herald, func(), error) {
	b, stop, err := benchapp.Start(ctx, filepath.Join(dir, "herald"), nil, app.Options{})
	if err != nil {
		return nil, nil, err
	}
	h := &herald{c: b.Client}
	if err := h.setUp(ctx, b.App.URL()); err != nil {
		stop()
		return nil, nil, err
	}
	return h, stop, nil
}

func (h *herald) setUp(ctx context.Context, url string) error {
	uri, err := h.c.CreateProject(ctx, "Load bench", "")
	if err != nil {
		return err
	}
	md := "/svc/md/" + strings.TrimPrefix(uri, "/svc/projects/")
	h.base = url + md
	if err := h.c.Do(ctx, "POST", md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": benchapp.SalesMAQL}}, nil); err != nil {
		return err
	}
	var stores strings.Builder
	stores.WriteString("id,nm_name\n")
	for i := range 1000 {
		fmt.Fprintf(&stores, "s%d,Store %d\n", i, i)
	}
	_, err = benchapp.PostCSV(ctx, h.c, h.base+"/datasets/dataset.stores/data", strings.NewReader(stores.String()))
	return err
}

// load times a full load of the file through the data endpoint.
func (h *herald) load(ctx context.Context, path string) (time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	_, err = benchapp.PostCSV(ctx, h.c, h.base+"/datasets/dataset.sales/data?mode=full", f)
	return time.Since(start), err
}
