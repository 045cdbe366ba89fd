package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/bench/benchapp"
)

// file is one exported file the command measures.
type file struct {
	name   string
	format string
	rows   int  // rows of the report exported through Herald
	large  bool // the report is over the large project, not the PDF's
}

// samples are the times of the runs of one measurement.
type samples []time.Duration

// best is the shortest time.
func (s samples) best() time.Duration { return slices.Min(s) }

// median is the middle time (the upper one of an even count).
func (s samples) median() time.Duration {
	t := slices.Sorted(slices.Values(s))
	return t[len(t)/2]
}

// result is what the command measured of one file.
type result struct {
	alone     samples
	aloneSize int
	execution samples  // execution alone, each on a new result
	fresh     []timing // whole path, each on a new result
	cached    []timing // whole path on the result of the last fresh run
	check     string   // what the verification of the last download found
}

func main() {
	runs := flag.Int("runs", 3, "timed runs of each measurement, after one warm-up")
	large := flag.Int("rows", 100_000, "customers of the large project: rows of the XLSX and CSV reports")
	small := flag.Int("pdf-rows", 10_000, "customers of the small project: rows of the PDF report")
	perCustomer := flag.Int("sales", 2, "sales of each customer")
	poll := flag.Duration("poll", 5*time.Millisecond, "wait between GETs of an export still rendering; 0 waits as the client package does (2 ms, doubling up to 1 s)")
	keep := flag.String("out", "", "folder to keep the downloaded files in (default: a temporary one, removed)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of Herald's timed runs to this file")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "herald-bench-export")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := cmp.Or(*keep, filepath.Join(dir, "files"))
	if err := os.MkdirAll(out, 0o700); err != nil {
		log.Fatal(err)
	}
	files := []file{
		{name: "XLSX", format: render.FormatXLS, rows: *large, large: true},
		{name: "CSV", format: render.FormatCSV, rows: *large, large: true},
		{name: "PDF", format: render.FormatPDF, rows: *small},
		{name: "PNG bar chart", format: render.FormatPNG, rows: len(regions), large: true},
	}
	machine()
	results := make([]result, len(files))
	for i, f := range files {
		results[i].alone, results[i].aloneSize = rendererAlone(f, *large, *small, *perCustomer, *runs)
	}
	h, stop, err := startHerald(ctx, filepath.Join(dir, "herald"))
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	projects, err := h.projects(ctx, dir, *large, *small, *perCustomer)
	if err != nil {
		log.Fatal(err)
	}
	m := measure{h: h, files: files, results: results, projects: projects, out: out, poll: *poll}
	stopProfile, err := benchapp.StartCPUProfile(*cpuprofile)
	if err != nil {
		log.Fatal(err)
	}
	if err := m.run(ctx, *runs); err != nil {
		log.Fatal(err)
	}
	if err := stopProfile(); err != nil {
		log.Fatal(err)
	}
	m.print(*large, *small, *perCustomer)
	fmt.Println("at the end:", loadAverage())
}

// machine prints what the figures were measured on.
func machine() {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.SplitSeq(string(data), "\n") {
			if name, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	fmt.Printf("machine: %s, %d CPUs, GOMAXPROCS %d, %s/%s, %s; %s\n", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.GOOS, runtime.GOARCH, runtime.Version(), loadAverage())
}

// loadAverage is the machine's load over the last 1, 5 and 15 minutes, as
// /proc/loadavg has it: the other work that shares the CPUs.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return "load average " + strings.Join(f[:3], " ")
	}
	return "load average unknown"
}

// rendererAlone renders the in-memory report of f into memory, once to warm up
// and then runs times, and returns the times and the size of the file. The
// report is over the customers of f's project: large of them, or small.
func rendererAlone(f file, large, small, perCustomer, runs int) (samples, int) {
	customers := small
	if f.large {
		customers = large
	}
	g := report(customers, perCustomer, f.format == render.FormatPNG)
	var buf bytes.Buffer
	var s samples
	for i := range runs + 1 {
		buf.Reset()
		start := time.Now()
		if err := renderTo(&buf, f.format, g); err != nil {
			log.Fatalf("%s: %v", f.name, err)
		}
		if i > 0 {
			s = append(s, time.Since(start))
		}
	}
	return s, buf.Len()
}

// projects creates and loads the large project and the PDF's.
func (h *herald) projects(ctx context.Context, dir string, large, small, perCustomer int) (map[bool]*project, error) {
	out := map[bool]*project{}
	for _, size := range []struct {
		large     bool
		customers int
	}{{true, large}, {false, small}} {
		data := filepath.Join(dir, fmt.Sprintf("data-%d", size.customers))
		if err := os.MkdirAll(data, 0o700); err != nil {
			return nil, err
		}
		start := time.Now()
		p, err := h.newProject(ctx, data, size.customers, perCustomer)
		if err != nil {
			return nil, err
		}
		fmt.Printf("project of %d customers, %d sales: made and loaded in %s\n", size.customers, size.customers*perCustomer,
			time.Since(start).Round(time.Millisecond))
		out[size.large] = p
	}
	return out, nil
}
