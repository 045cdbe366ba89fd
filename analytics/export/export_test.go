package export

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// grids is a Source of fixed results: "sales" has two rows, "none" none, "gone"
// exists when the export starts and is gone when it renders.
type grids struct{}

func (grids) ResultExists(_ context.Context, _, id string) (bool, error) {
	return id == "sales" || id == "none" || id == "gone", nil
}

func (grids) ResultGrid(_ context.Context, _, id string) (*grid.Grid, error) {
	rows := map[string][]grid.Row{
		"sales": {{Headers: []string{"East"}, Values: []*float64{ptr(1200.5)}}, {Headers: []string{"West"}, Values: []*float64{ptr(-3)}}},
		"none":  nil,
	}
	rs, ok := rows[id]
	if !ok {
		return nil, ErrNoResult
	}
	return &grid.Grid{Title: "Sales by region", Format: grid.FormatGrid, RowHeaders: []string{"Region"},
		Columns: []grid.Column{{Path: []string{"Revenue"}, Format: "#,##0.00"}},
		Rows: func(yield func(grid.Row, error) bool) {
			for _, r := range rs {
				if !yield(r, nil) {
					return
				}
			}
		}}, nil
}

func ptr(v float64) *float64 { return &v }

type bundle struct {
	st  *store.Store
	dir string
	now time.Time
}

func newBundle(t *testing.T) *bundle {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, now := context.Background(), time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	must(t, st.EnsureDomain(ctx, "d", now))
	must(t, st.CreateUser(ctx, store.User{ID: "u", Domain: "d", Login: "u@x.io", PasswordHash: "x", Created: now, Updated: now}))
	must(t, st.CreateProject(ctx, store.Project{ID: "p", Title: "P", State: store.ProjectEnabled, Author: "u", Contributor: "u",
		Created: now, Updated: now}, "adminRole"))
	return &bundle{st: st, dir: dir, now: now}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) service() *Service {
	return New(b.st, grids{}, Options{Dir: filepath.Join(b.dir, "exports"), Clock: clock.NowFrom(func() time.Time { return b.now })},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// run starts the service and returns a function that stops it.
func run(s *Service) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// wait polls the export until it is no longer running.
func wait(t *testing.T, s *Service, id string) store.Export {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for range 2000 {
		e, err := s.Get(context.Background(), id)
		must(t, err)
		if e.State != store.ExportRunning {
			return e
		}
		<-tick.C
	}
	t.Fatalf("export %s still running", id)
	return store.Export{}
}

func TestExportStates(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	s := b.service()
	stop := run(s)
	defer stop()
	ctx := context.Background()

	e, err := s.Start(ctx, "p", "sales", "csv")
	must(t, err)
	done := wait(t, s, e.ID)
	if done.State != store.ExportDone || FileName(done) != "Sales by region.csv" {
		t.Fatalf("export = %+v", done)
	}
	f, err := os.Open(done.Path)
	must(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	must(t, err)
	if len(recs) != 3 || recs[1][0] != "East" || recs[1][1] != "1200.5" || recs[2][1] != "-3" {
		t.Errorf("csv = %v", recs)
	}

	empty, err := s.Start(ctx, "p", "none", "PDF")
	must(t, err)
	if got := wait(t, s, empty.ID); got.State != store.ExportEmpty || got.Path != "" {
		t.Errorf("empty export = %+v", got)
	}
	missing, err := s.Start(ctx, "p", "gone", "XLSX")
	must(t, err)
	if got := wait(t, s, missing.ID); got.State != store.ExportFailed || got.Format != "XLS" {
		t.Errorf("export of an unknown result = %+v", got)
	}
	if _, err := s.Start(ctx, "p", "never", "CSV"); !errors.Is(err, ErrNoResult) {
		t.Errorf("export of a result that never was: %v, want ErrNoResult", err)
	}
	if _, err := s.Start(ctx, "p", "sales", "DOCX"); err == nil {
		t.Error("accepted DOCX")
	}

	// Past its retention an export is gone, and pruning removes its file.
	b.now = b.now.Add(25 * time.Hour)
	if _, err := s.Get(ctx, e.ID); err != store.ErrNotFound {
		t.Errorf("expired export: %v", err)
	}
	s.prune(ctx)
	if _, err := os.Stat(done.Path); !os.IsNotExist(err) {
		t.Errorf("expired file still there: %v", err)
	}
}

func TestUnfinishedExportsRenderAfterRestart(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	first := b.service()
	e, err := first.Start(context.Background(), "p", "sales", "PNG") // queued, never run
	must(t, err)
	second := b.service()
	stop := run(second)
	defer stop()
	if got := wait(t, second, e.ID); got.State != store.ExportDone {
		t.Fatalf("after restart export = %+v", got)
	}
}
