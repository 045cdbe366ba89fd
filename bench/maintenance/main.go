// Command maintenance measures the export of a whole project with its data and its
// import into a new project, on a Herald started in-process: a sales dataset of -rows
// rows (id INT, a random amount DECIMAL(15,2), a reference to one of 1,000 stores, a date)
// streamed into the data endpoint, then POST maintenance/export with exportData and
// POST maintenance/import of its token, each timed from the request until its etltask
// is OK. It prints the rows, the seconds, the archive's size and the process's peak RSS
// in each phase (reset between phases where Linux allows it) beside the largest Go heap
// seen (sampled every 20 ms; most of the RSS is DuckDB's buffer cache), and checks that a count
// and a sum over the data agree in both projects.
//
//	go run ./bench/maintenance [-rows 1000000]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/client"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "rows of the sales dataset")
	flag.Parse()
	benchapp.Header(os.Stdout, "maintenance")
	if err := run(*rows); err != nil {
		log.Fatal(err)
	}
}

func run(rows int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "herald-bench-maintenance")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "herald")
	h, stop, err := benchapp.Start(ctx, data, nil, app.Options{})
	if err != nil {
		return err
	}
	defer stop()
	c := h.Client
	src, err := newProject(ctx, c, "Maintenance bench")
	if err != nil {
		return err
	}
	start := time.Now()
	if err := src.fill(ctx, c, h.App.URL(), rows); err != nil {
		return err
	}
	fmt.Printf("loaded %d rows in %.2f s; peak RSS so far %s\n", rows, time.Since(start).Seconds(), mib(peakRSS()))

	var export struct {
		Artifact struct {
			Status struct{ URI string } `json:"status"`
			Token  string               `json:"token"`
		} `json:"exportArtifact"`
	}
	exported, err := measure(ctx, c, func() (string, error) {
		err := c.Do(ctx, "POST", src.md+"/maintenance/export", map[string]any{"exportProject": map[string]any{
			"exportUsers": true, "exportData": true}}, &export)
		return export.Artifact.Status.URI, err
	})
	if err != nil {
		return err
	}
	archive, err := archiveSize(filepath.Join(data, "archives"))
	if err != nil {
		return err
	}
	dst, err := newProject(ctx, c, "Maintenance bench copy")
	if err != nil {
		return err
	}
	imported, err := measure(ctx, c, func() (string, error) {
		var created struct{ URI string }
		err := c.Do(ctx, "POST", dst.md+"/maintenance/import", map[string]any{"importProject": map[string]any{
			"token": export.Artifact.Token}}, &created)
		return created.URI, err
	})
	if err != nil {
		return err
	}
	if err := sameData(ctx, c, src, dst, rows); err != nil {
		return err
	}
	fmt.Printf("%-8s %10s %10s %12s %10s %14s\n", "phase", "rows", "seconds", "archive MB", "peak RSS", "peak Go heap")
	for _, p := range []struct {
		name string
		m    measured
	}{{"export", exported}, {"import", imported}} {
		fmt.Printf("%-8s %10d %10.2f %12.1f %10s %14s\n", p.name, rows, p.m.took.Seconds(), float64(archive)/1e6,
			mib(p.m.peakRSS), mib(int64(p.m.peakHeap)))
	}
	return nil
}

// project is a project of the bench.
type project struct {
	md string // /svc/md/<pid>
}

func newProject(ctx context.Context, c *client.Client, title string) (*project, error) {
	uri, err := c.CreateProject(ctx, title, "")
	if err != nil {
		return nil, err
	}
	return &project{md: "/svc/md/" + strings.TrimPrefix(uri, "/svc/projects/")}, nil
}

// fill gives the project the model, 1,000 stores, the sales rows (generated as they are
// sent) and two metrics.
func (p *project) fill(ctx context.Context, c *client.Client, base string, rows int) error {
	if err := c.Do(ctx, "POST", p.md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": benchapp.SalesMAQL}}, nil); err != nil {
		return err
	}
	var stores strings.Builder
	stores.WriteString("id,nm_name\n")
	for i := range 1000 {
		fmt.Fprintf(&stores, "s%d,Store %d\n", i, i)
	}
	if _, err := benchapp.PostCSV(ctx, c, base+p.md+"/datasets/dataset.stores/data", strings.NewReader(stores.String())); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		rng := rand.New(rand.NewPCG(1, 2))
		fmt.Fprintln(w, "id,f_amount,stores_id,dt_sold_on_id")
		for i := range rows {
			fmt.Fprintf(w, "%d,%d.%02d,s%d,2024-%02d-%02d\n", i+1, rng.IntN(100_000), rng.IntN(100), rng.IntN(1000),
				1+rng.IntN(12), 1+rng.IntN(28))
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := benchapp.PostCSV(ctx, c, base+p.md+"/datasets/dataset.sales/data?mode=full", pr); err != nil {
		return err
	}
	return nil
}

// sameData checks that a count and a sum of the sales agree in both projects.
func sameData(ctx context.Context, c *client.Client, src, dst *project, rows int) error {
	var want []float64
	for i, p := range []*project{src, dst} {
		var got []float64
		for _, expr := range []string{"SELECT COUNT({attr.sales.id})", "SELECT SUM({fact.sales.amount})"} {
			var created struct{ URI string }
			if err := c.Do(ctx, "POST", p.md+"/obj", map[string]any{"metric": map[string]any{"meta": map[string]any{"title": expr},
				"content": map[string]any{"expression": expr}}}, &created); err != nil {
				return err
			}
			v, _, ok, err := c.ExecuteMetric(ctx, created.URI)
			if err != nil || !ok {
				return fmt.Errorf("metric %s: %v", expr, err)
			}
			got = append(got, v)
		}
		if i == 0 {
			want = got
			if int(got[0]) != rows {
				return fmt.Errorf("the source counts %v rows, want %d", got[0], rows)
			}
		} else if got[0] != want[0] || got[1] != want[1] {
			return fmt.Errorf("the copy has count %v and sum %v, the source %v and %v", got[0], got[1], want[0], want[1])
		}
	}
	fmt.Printf("both projects: %.0f rows, amounts summing to %.2f\n", want[0], want[1])
	return nil
}

// measured is how a task went: from its request until its etltask was OK.
type measured struct {
	took     time.Duration
	peakRSS  int64
	peakHeap uint64 // the largest Go heap in use seen while waiting
}

// measure starts a task with start, which returns its etltask URI, and waits for it.
func measure(ctx context.Context, c *client.Client, start func() (string, error)) (measured, error) {
	resetPeak()
	began := time.Now()
	uri, err := start()
	if err != nil {
		return measured{}, err
	}
	heap, err := wait(ctx, c, uri)
	return measured{took: time.Since(began), peakRSS: peakRSS(), peakHeap: heap}, err
}

// wait polls an etltask until it is OK, and returns the largest Go heap it saw.
func wait(ctx context.Context, c *client.Client, uri string) (uint64, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	var heap uint64
	var ms runtime.MemStats
	for {
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapInuse)
		var state struct {
			TaskState struct{ Status, Msg string } `json:"taskState"`
		}
		if err := c.Do(ctx, "GET", uri, nil, &state); err != nil {
			return heap, err
		}
		switch state.TaskState.Status {
		case "OK":
			return heap, nil
		case "ERROR":
			return heap, errors.New(state.TaskState.Msg)
		}
		select {
		case <-ctx.Done():
			return heap, ctx.Err()
		case <-t.C:
		}
	}
}

func archiveSize(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return 0, err
		}
		total += info.Size()
	}
	return total, nil
}

// peakRSS is the process's peak resident set (VmHWM), in bytes; 0 where unknown.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeak starts a new peak RSS measure (Linux 4.0 and later).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
