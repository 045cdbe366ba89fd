package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldhq/herald/analytics/render"
)

// measure runs the whole path of every file on a running Herald.
type measure struct {
	h        *herald
	files    []file
	results  []result
	projects map[bool]*project // by file.large
	out      string            // folder of the downloads
	poll     time.Duration
}

// run measures every file after one warm-up pass of each: first runs passes
// on new results, the files taking turns, each followed by an execution alone
// on another new result; then runs passes on the result of each file's last
// new one. Every download is verified.
func (m *measure) run(ctx context.Context, runs int) error {
	seen := map[string]bool{} // data results executions were answered with
	alias, result := make([]string, len(m.files)), make([]string, len(m.files))
	for i := range runs + 1 {
		for j, f := range m.files {
			alias[j] = fmt.Sprintf("Revenue %s-%d", f.format, i)
			t, err := m.pass(ctx, j, alias[j], "new")
			if err != nil {
				return err
			}
			if seen[t.dataResult] {
				return fmt.Errorf("%s: a new execution was answered with an earlier result %s", f.name, t.dataResult)
			}
			seen[t.dataResult], result[j] = true, t.dataResult
			d, id, err := m.h.execution(ctx, m.projects[f.large], f, fmt.Sprintf("Revenue %s-%d-alone", f.format, i))
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			if seen[id] {
				return fmt.Errorf("%s: a new execution was answered with an earlier result %s", f.name, id)
			}
			seen[id] = true
			if i > 0 {
				m.results[j].fresh = append(m.results[j].fresh, t)
				m.results[j].execution = append(m.results[j].execution, d)
			}
		}
	}
	for range runs {
		for j, f := range m.files {
			t, err := m.pass(ctx, j, alias[j], "cached")
			if err != nil {
				return err
			}
			if t.dataResult != result[j] {
				return fmt.Errorf("%s: an equal execution was answered with %s, not the cached %s", f.name, t.dataResult, result[j])
			}
			m.results[j].cached = append(m.results[j].cached, t)
		}
	}
	return nil
}

// pass runs the whole path of file j once and verifies the download.
func (m *measure) pass(ctx context.Context, j int, alias, kind string) (timing, error) {
	f := m.files[j]
	path := filepath.Join(m.out, strings.ReplaceAll(f.name, " ", "-")+"-"+kind+render.Extension(f.format))
	t, err := m.h.wholePath(ctx, m.projects[f.large], f, alias, path, m.poll)
	if err != nil {
		return t, fmt.Errorf("%s: %w", f.name, err)
	}
	check, err := verify(path, f)
	if err != nil {
		return t, fmt.Errorf("%s: %w", f.name, err)
	}
	m.results[j].check = check
	return t, nil
}

// whole returns the times of a pass from the execute request to the file
// written.
func whole(ts []timing) samples {
	s := make(samples, len(ts))
	for i, t := range ts {
		s[i] = t.written
	}
	return s
}

// print writes the tables: the renderers alone beside the whole path, on new
// and on cached results, then the phases of the whole path and the checks.
func (m *measure) print(large, small, perCustomer int) {
	fmt.Printf("\nreports of 2 attributes and 3 metrics; whole path: %s customers (%s sales) for XLSX, CSV and PNG, %s (%s sales) for PDF;\n",
		thousands(large), thousands(large*perCustomer), thousands(small), thousands(small*perCustomer))
	polled := "polled every " + m.poll.String()
	if m.poll <= 0 {
		polled = "polled as the client package does"
	}
	fmt.Printf("medians of %d runs after a warm-up (best in brackets); %s\n\n", len(m.results[0].alone), polled)
	fmt.Println("| file | renderer alone | whole path | ratio | size |")
	fmt.Println("|---|---|---|---|---|")
	for i, f := range m.files {
		r := m.results[i]
		w := whole(r.fresh)
		fmt.Printf("| %s | %s (%s) | %s (%s) | %.1f× | %s |\n", m.label(f), seconds(r.alone.median()), seconds(r.alone.best()),
			seconds(w.median()), seconds(w.best()), w.median().Seconds()/r.alone.median().Seconds(), bytesOf(r.fresh[0].size))
	}
	fmt.Println("\nwhole path on a cached result (the same execution again: the query does not run, the export is rendered)")
	fmt.Println("\n| file | renderer alone | whole path, cached result | ratio | size |")
	fmt.Println("|---|---|---|---|---|")
	for i, f := range m.files {
		r := m.results[i]
		w := whole(r.cached)
		fmt.Printf("| %s | %s (%s) | %s (%s) | %.1f× | %s |\n", m.label(f), seconds(r.alone.median()), seconds(r.alone.best()),
			seconds(w.median()), seconds(w.best()), w.median().Seconds()/r.alone.median().Seconds(), bytesOf(r.cached[0].size))
	}
	m.printPhases()
	fmt.Println()
	for i, f := range m.files {
		r := m.results[i]
		fmt.Printf("%s: renderer alone %s on the same %s rows in memory, the whole path %s; download %s\n", f.name,
			bytesOf(int64(r.aloneSize)), thousands(f.rows), bytesOf(r.cached[0].size), r.check)
	}
	target := func(name string, i int, limit time.Duration) {
		fresh, cached := whole(m.results[i].fresh).median(), whole(m.results[i].cached).median()
		fmt.Printf("target %s whole path ≤ %s: new result %s (%s), cached result %s (%s)\n", name, seconds(limit),
			seconds(fresh), met(fresh, limit), seconds(cached), met(cached, limit))
	}
	target(m.label(m.files[0]), 0, time.Second)
	target(m.label(m.files[2]), 2, 2*time.Second)
}

// printPhases writes the median moments of the whole path, since the execute
// request.
func (m *measure) printPhases() {
	fmt.Println("\nphases of the whole path, medians since the execute request")
	fmt.Println("(execution alone: executor3 until the result is computed, a pass of its own on another new result)")
	fmt.Println("\n| file | result | execution alone | executed | export accepted | file ready | file written | GETs answered 202 |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for i, f := range m.files {
		for _, p := range []struct {
			kind string
			ts   []timing
		}{{"new", m.results[i].fresh}, {"cached", m.results[i].cached}} {
			at := func(pick func(timing) time.Duration) string {
				s := make(samples, len(p.ts))
				for k, t := range p.ts {
					s[k] = pick(t)
				}
				return seconds(s.median())
			}
			polls := make([]int, len(p.ts))
			for k, t := range p.ts {
				polls[k] = t.polls
			}
			alone := "—"
			if p.kind == "new" {
				alone = seconds(m.results[i].execution.median())
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %v |\n", m.label(f), p.kind, alone,
				at(func(t timing) time.Duration { return t.executed }), at(func(t timing) time.Duration { return t.accepted }),
				at(func(t timing) time.Duration { return t.ready }), at(func(t timing) time.Duration { return t.written }), polls)
		}
	}
}

// label names a file in the tables with its rows.
func (m *measure) label(f file) string {
	if f.format == render.FormatPNG {
		return fmt.Sprintf("%s (%d bars per metric)", f.name, f.rows)
	}
	return fmt.Sprintf("%s, %s rows", f.name, thousands(f.rows))
}

func met(d, limit time.Duration) string {
	if d <= limit {
		return "met"
	}
	return "missed"
}

// seconds shows a time in s from one second up, in ms below.
func seconds(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

// bytesOf shows a size in MB from 1 MB up, in KB below.
func bytesOf(n int64) string {
	if n >= 1e6 {
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0f KB", float64(n)/1e3)
}

// thousands writes n with commas between thousands.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
