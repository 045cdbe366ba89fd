package xtab

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/demo"
	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// env is an executor over the demo project.
type env struct {
	st   *store.Store
	md   *analytics.Service
	ex   *Executor
	pid  string
	demo *demo.Project
	dir  string

	mu  sync.Mutex
	now time.Time
}

// plan compiles the demo's report with the given identifier, and encodes the
// plan as a result keeps it.
func (e *env) plan(t *testing.T, report string) (p *plan, data []byte, digest string) {
	t.Helper()
	ctx := context.Background()
	d, err := e.ex.resolve(ctx, e.pid, Source{Report: e.demo.Reports[report]})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = e.ex.plan(ctx, e.pid, d, analytics.Slice{}); err != nil {
		t.Fatal(err)
	}
	if data, digest, err = p.encode(); err != nil {
		t.Fatal(err)
	}
	return p, data, digest
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{dir: t.TempDir(), pid: "demo", now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st, err := store.Open(ctx, filepath.Join(e.dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	t.Cleanup(func() { st.Close() })
	for _, err := range []error{
		st.EnsureDomain(ctx, "d", e.now),
		st.CreateUser(ctx, store.User{ID: "u", Domain: "d", Login: "u@x.io", PasswordHash: "x", Created: e.now, Updated: e.now}),
		st.CreateProject(ctx, store.Project{ID: e.pid, Title: "Demo", State: store.ProjectEnabled, Author: "u", Contributor: "u",
			Created: e.now, Updated: e.now}, "adminRole"),
		st.CreateProject(ctx, store.Project{ID: "other", Title: "Other", State: store.ProjectEnabled, Author: "u", Contributor: "u",
			Created: e.now, Updated: e.now}, "adminRole"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if e.md, err = analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(e.dir, "warehouse"), Clock: clock.NowFrom(e.clock)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.md.Close() })
	if e.demo, err = demo.Setup(ctx, e.md, os.DirFS("../../testdata/demo"), e.pid, "u"); err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Clock = filepath.Join(e.dir, "results"), clock.NowFrom(e.clock)
	e.ex = New(st, e.md, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.ex.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return e
}

// rows returns the rows of a grid as "headers|values".
func rows(t *testing.T, g *grid.Grid) []string {
	t.Helper()
	var out []string
	for r, err := range g.Rows {
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, v := range r.Values {
			if v == nil {
				vals = append(vals, "")
			} else {
				vals = append(vals, "v")
			}
		}
		out = append(out, strings.Join(r.Headers, "/")+"|"+strings.Join(vals, ","))
	}
	return out
}

func TestExecuteReportsIntoGrids(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	res, err := e.ex.Execute(ctx, e.pid, "u", Source{Report: e.demo.Reports["report.revenue_by_month"]})
	if err != nil {
		t.Fatal(err)
	}
	if res.View.ReportName != "Revenue by month" || res.View.Format != grid.FormatChart || res.Definition == "" ||
		res.URI() != "/svc/md/demo/obj/"+res.ID || res.DataResultURI() != "/svc/md/demo/dataResult/"+res.DataID {
		t.Fatalf("result = %+v", res)
	}
	g, err := e.ex.ResultGrid(ctx, e.pid, res.DataID)
	if err != nil {
		t.Fatal(err)
	}
	got := rows(t, g)
	if g.Chart != grid.ChartLine || !slices.Equal(g.RowKinds, []string{"date"}) || len(got) != 24 ||
		got[0] != "Jan 2024|v" || got[1] != "Feb 2024|v" || got[23] != "Dec 2025|v" {
		t.Fatalf("grid %+v rows %v", g, got)
	}
	if len(g.Columns) != 1 || g.Columns[0].Format != "#,##0.00" || !slices.Equal(g.Columns[0].Path, []string{"Revenue"}) {
		t.Errorf("columns %+v", g.Columns)
	}

	// Filters read with titles; a crafted value is only data.
	els, err := e.md.Elements(ctx, e.pid, mustID(t, e, "label.regions.name"), analytics.ElementsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	label := uriOf(t, e, "label.regions.name")
	def := &analytics.ReportDefinitionContent{Format: grid.FormatGrid,
		Grid: analytics.Grid{Rows: []analytics.GridItem{{Attribute: &analytics.GridAttribute{URI: label}}},
			Columns: []analytics.GridItem{{MetricGroup: true}},
			Metrics: []analytics.GridMetric{{URI: e.demo.Metrics["metric.revenue"]}, {URI: e.demo.Metrics["metric.region_share"], Alias: "Share"}}},
		Filters: []analytics.Filter{{Expression: "[" + label + "] IN ([" + label + "/elements?id=" + itoa(els.Items[0].ID) + "], [" +
			label + "/elements?id=" + itoa(els.Items[1].ID) + "]) AND [" + label + `] <> "'); DROP TABLE f_sales; --"`}}}
	res, err = e.ex.Execute(ctx, e.pid, "u", Source{Content: def})
	if err != nil {
		t.Fatal(err)
	}
	if g, err = e.ex.ResultGrid(ctx, e.pid, res.DataID); err != nil {
		t.Fatal(err)
	}
	want := "Region IN (" + els.Items[0].Title + ", " + els.Items[1].Title + `) AND Region <> '); DROP TABLE f_sales; --`
	if len(g.Filters) != 1 || g.Filters[0] != want || len(rows(t, g)) != 2 || g.Columns[1].Path[0] != "Share" || g.Columns[1].Format != "0.0%" {
		t.Errorf("filters %q, want %q; columns %+v", g.Filters, want, g.Columns)
	}
	if _, _, err := e.ex.DataResult(ctx, "other", res.DataID, Page{}); !errors.Is(err, ErrNoResult) {
		t.Errorf("another project's result: %v", err)
	}
	if _, err := e.ex.ResultGrid(ctx, e.pid, "nope"); !errors.Is(err, ErrNoResult) {
		t.Errorf("unknown result: %v", err)
	}
}

func TestExecuteSharesOneResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	src := Source{Report: e.demo.Reports["report.regions_and_products"]}
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			res, err := e.ex.Execute(ctx, e.pid, "u", src)
			if err != nil {
				t.Error(err)
			}
			ids[i] = res.DataID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("executions made results %v", ids)
		}
	}
	if _, err := e.ex.ResultGrid(ctx, e.pid, ids[0]); err != nil {
		t.Fatal(err)
	}
	// A load makes a new data version and so a new result.
	if _, err := e.md.Load(ctx, e.pid, "dataset.regions", analytics.LoadIncremental, strings.NewReader("id,nm_name\nr9,Polar\n")); err != nil {
		t.Fatal(err)
	}
	res, err := e.ex.Execute(ctx, e.pid, "u", src)
	if err != nil || res.DataID == ids[0] {
		t.Fatalf("after a load: %v, %v", res.DataID, err)
	}
}

// TestFindOrCreateMakesOneResult releases 32 executions of one plan at once
// into the search for its result: one creates it and the others find it.
func TestFindOrCreateMakesOneResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	p, data, digest := e.plan(t, "report.regions_and_products")
	version, err := e.md.DataVersion(ctx, e.pid)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	ids := make([]string, 32)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			<-release
			r, err := e.ex.findOrCreate(ctx, p, store.Result{ID: "r" + strconv.Itoa(i), ProjectID: e.pid, Digest: digest,
				DataVersion: version, State: store.ResultRunning, Plan: data, Created: e.now, Expires: e.now.Add(time.Hour)},
				store.ResultObject{ID: "o" + strconv.Itoa(i), ProjectID: e.pid, Author: "u", Created: e.now})
			if err != nil {
				t.Error(err)
			}
			ids[i] = r.ID
		})
	}
	close(release)
	wg.Wait()
	if distinct := slices.Compact(slices.Sorted(slices.Values(ids))); len(distinct) != 1 {
		t.Fatalf("32 equal executions made results %v", distinct)
	}
	for i := range ids {
		if o, err := e.st.ResultObjectByID(ctx, "o"+strconv.Itoa(i)); err != nil || o.ResultID != ids[0] {
			t.Errorf("execution %d's object: %+v, %v; want one of result %s", i, o, err, ids[0])
		}
	}
}

func TestExecuteTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Timeout: time.Nanosecond})
	ctx := context.Background()
	res, err := e.ex.Execute(ctx, e.pid, "u", Source{Report: e.demo.Reports["report.revenue_by_region"]})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.ex.ResultGrid(ctx, e.pid, res.DataID)
	var failed *FailedError
	if !errors.As(err, &failed) || !strings.Contains(failed.Msg, "took longer than 1ns") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := e.ex.DataResult(ctx, e.pid, res.DataID, Page{}); !errors.As(err, &failed) {
		t.Fatalf("data result of a failed execution: %v", err)
	}
}

func TestResultRunningAtRestartIsComputed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	_, data, digest := e.plan(t, "report.revenue_by_region")
	// A result a stopped process left running.
	r := store.Result{ID: "left", ProjectID: e.pid, Digest: digest, State: store.ResultRunning, Author: "u", Plan: data,
		Created: e.now, Expires: e.now.Add(time.Hour)}
	if err := e.st.CreateResult(ctx, r, store.ResultObject{ID: "o", ProjectID: e.pid, ResultID: r.ID, Author: "u", Created: e.now}); err != nil {
		t.Fatal(err)
	}
	g, err := e.ex.ResultGrid(ctx, e.pid, "left")
	if err != nil || len(rows(t, g)) != 5 {
		t.Fatalf("grid %v, %v", g, err)
	}
	state, x, err := e.ex.DataResult(ctx, e.pid, "left", Page{})
	if err != nil || state != store.ResultDone || x.OverallSize.Rows != 5 {
		t.Fatalf("data result %s %v %v", state, x, err)
	}
}

func TestExpiredResultsArePruned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Retention: time.Hour})
	ctx := context.Background()
	res, err := e.ex.Execute(ctx, e.pid, "u", Source{Report: e.demo.Reports["report.revenue_by_region"]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ex.ResultGrid(ctx, e.pid, res.DataID); err != nil {
		t.Fatal(err)
	}
	r, err := e.st.ResultByID(ctx, res.DataID)
	if err != nil || r.Path == "" {
		t.Fatalf("result %+v, %v", r, err)
	}
	e.advance(30 * time.Minute)
	e.ex.prune(ctx)
	if _, err := os.Stat(r.Path); err != nil {
		t.Fatalf("pruned before it expired: %v", err)
	}
	e.advance(31 * time.Minute)
	e.ex.prune(ctx)
	if _, err := os.Stat(r.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file still there: %v", err)
	}
	if _, _, err := e.ex.DataResult(ctx, e.pid, res.DataID, Page{}); !errors.Is(err, ErrNoResult) {
		t.Errorf("data result after pruning: %v", err)
	}
}

func TestPerProjectBound(t *testing.T) {
	t.Parallel()
	ex := New(nil, nil, Config{PerProject: 1}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	release, err := ex.acquire(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ex.acquire(canceled, "p"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second place: %v", err)
	}
	other, err := ex.acquire(context.Background(), "q")
	if err != nil {
		t.Fatalf("another project waits: %v", err)
	}
	other()
	release()
	again, err := ex.acquire(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	again()
}

func uriOf(t testing.TB, e *env, ident string) string {
	t.Helper()
	objs, _, err := e.md.Identifiers(context.Background(), e.pid, []string{ident})
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v %v", ident, objs, err)
	}
	return objs[0].URI
}

func mustID(t testing.TB, e *env, ident string) int64 {
	id, _ := objectID(e.pid, uriOf(t, e, ident))
	return id
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestLostFileIsComputedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	res, err := e.ex.Execute(ctx, e.pid, "u", Source{Report: e.demo.Reports["report.revenue_by_region"]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ex.ResultGrid(ctx, e.pid, res.DataID); err != nil {
		t.Fatal(err)
	}
	r, err := e.st.ResultByID(ctx, res.DataID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.Path); err != nil {
		t.Fatal(err)
	}
	state, _, err := e.ex.DataResult(ctx, e.pid, res.DataID, Page{})
	if err != nil || state != store.ResultRunning {
		t.Fatalf("data result of a lost file: %s, %v", state, err)
	}
	g, err := e.ex.ResultGrid(ctx, e.pid, res.DataID)
	if err != nil || len(rows(t, g)) != 5 {
		t.Fatalf("grid after recomputing: %v", err)
	}
	// A corrupt file too.
	if r, err = e.st.ResultByID(ctx, res.DataID); err != nil || os.WriteFile(r.Path, []byte("HXT1\x05{}"), 0o600) != nil {
		t.Fatal(err)
	}
	if g, err = e.ex.ResultGrid(ctx, e.pid, res.DataID); err != nil || len(rows(t, g)) != 5 {
		t.Fatalf("grid after a corrupt file: %v", err)
	}
}
