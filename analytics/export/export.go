package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// ErrNoResult is returned by a Source for a result it does not know.
var ErrNoResult = errors.New("no such report result")

// Source gives the executed result of a report as a grid.
type Source interface {
	ResultGrid(ctx context.Context, projectID, resultID string) (*grid.Grid, error)
	// ResultExists reports whether the project has the result; it may still vanish
	// (expire) before it is rendered.
	ResultExists(ctx context.Context, projectID, resultID string) (bool, error)
}

// Formats maps the formats a client may ask for (upper-cased) to the
// renderer's; XLSX is accepted as another name for XLS.
var Formats = map[string]string{
	"CSV": render.FormatCSV, "XLS": render.FormatXLS, "XLSX": render.FormatXLS,
	"PDF": render.FormatPDF, "PNG": render.FormatPNG, "HTML": render.FormatHTML,
}

// Config configures the exporter. Zero values take the documented defaults.
type Config struct {
	// Dir holds the exported files. Required.
	Dir string
	// Workers is how many exports render at once. Default 2.
	Workers int
	// Retention is how long a finished export can be downloaded. Default 24h.
	Retention time.Duration
	// HTMLRows is how many rows an HTML export shows. Default render.DefaultHTMLRows (50).
	HTMLRows int
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Registerer receives the exporter's metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer
}

// Service renders exports with a bounded pool.
type Service struct {
	st    *store.Store
	src   Source
	cfg   Config
	log   *slog.Logger
	jobs  chan string
	slots chan struct{} // one per render under way, Workers in all: the pool's and Write's

	exports    *prometheus.CounterVec
	renderTime *prometheus.HistogramVec

	mu      sync.Mutex
	pending []string // queued before Run started
	running bool
}

// New returns an exporter; Run starts its pool.
func New(st *store.Store, src Source, cfg Config, log *slog.Logger) *Service {
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	if cfg.Retention == 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.HTMLRows == 0 {
		cfg.HTMLRows = render.DefaultHTMLRows
	}
	cfg.Clock = clock.Or(cfg.Clock)
	f := promauto.With(cfg.Registerer)
	s := &Service{st: st, src: src, cfg: cfg, log: log, jobs: make(chan string, 1024), slots: make(chan struct{}, cfg.Workers),
		exports: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_export_exports_total",
			Help: "Exports finished, by format and state (done, empty, failed).",
		}, []string{"format", "state"}),
		renderTime: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_export_render_duration_seconds",
			Help:    "Time to compute (or read) a result and render it into a file, by format.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"format"}),
	}
	// Every format and state is exported from the start, at 0.
	for _, format := range Formats {
		for _, state := range []string{store.ExportDone, store.ExportEmpty, store.ExportFailed} {
			s.exports.WithLabelValues(format, state)
		}
	}
	return s
}

// Start records a new export of a result and queues it for rendering.
// format is one of the keys of Formats. A result the project does not have is
// ErrNoResult at once.
func (s *Service) Start(ctx context.Context, projectID, resultID, format string) (store.Export, error) {
	f, ok := Formats[strings.ToUpper(format)]
	if !ok {
		return store.Export{}, fmt.Errorf("unknown format %q", format)
	}
	ok, err := s.src.ResultExists(ctx, projectID, resultID)
	switch {
	case err != nil:
		return store.Export{}, err
	case !ok:
		return store.Export{}, ErrNoResult
	}
	now := s.cfg.Clock.Now()
	e := store.Export{ID: store.NewID(24), ProjectID: projectID, ResultID: resultID, Format: f,
		State: store.ExportRunning, Created: now, Expires: now.Add(s.cfg.Retention)}
	if err := s.st.CreateExport(ctx, e); err != nil {
		return store.Export{}, err
	}
	s.enqueue(e.ID)
	return e, nil
}

func (s *Service) enqueue(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		s.pending = append(s.pending, id)
		return
	}
	go func() { s.jobs <- id }() // never block a request on a full queue
}

// Get returns the export, or store.ErrNotFound once it has expired.
func (s *Service) Get(ctx context.Context, id string) (store.Export, error) {
	e, err := s.st.ExportByID(ctx, id)
	if err != nil {
		return e, err
	}
	if !s.cfg.Clock.Now().Before(e.Expires) {
		return store.Export{}, store.ErrNotFound
	}
	return e, nil
}

// Run renders queued exports until ctx ends. Exports a previous process left
// unfinished are rendered again.
func (s *Service) Run(ctx context.Context) error {
	left, err := s.st.RunningExports(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	queued := s.pending
	s.pending, s.running = nil, true
	s.mu.Unlock()
	for _, e := range left {
		queued = append(queued, e.ID)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, id := range queued {
			select {
			case s.jobs <- id:
			case <-ctx.Done():
				return
			}
		}
	})
	for range s.cfg.Workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case id := <-s.jobs:
					s.slots <- struct{}{}
					s.render(ctx, id)
					<-s.slots
				}
			}
		})
	}
	wg.Go(func() { s.pruneLoop(ctx) })
	wg.Wait()
	return nil
}

// render makes the file of one export and records the outcome.
func (s *Service) render(ctx context.Context, id string) {
	e, err := s.st.ExportByID(ctx, id)
	if err != nil || e.State != store.ExportRunning {
		return
	}
	e.Finished = s.cfg.Clock.Now()
	began := time.Now()
	g, err := s.src.ResultGrid(ctx, e.ProjectID, e.ResultID)
	if err == nil {
		e.Title = g.Title
		e.Path, err = s.write(e, g)
	}
	switch {
	case errors.Is(err, ErrEmpty):
		e.State = store.ExportEmpty
	case err != nil:
		if ctx.Err() != nil {
			return // stopping: the next start renders it again
		}
		e.State, e.Error = store.ExportFailed, err.Error()
		s.log.Warn("export failed", "export", e.ID, "result", e.ResultID, "format", e.Format, "err", err)
	default:
		e.State = store.ExportDone
	}
	s.renderTime.WithLabelValues(e.Format).Observe(time.Since(began).Seconds())
	s.exports.WithLabelValues(e.Format, e.State).Inc()
	if err := s.st.FinishExport(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("record export", "export", e.ID, "err", err)
	}
}

// ErrEmpty is Write's answer for a report without data.
var ErrEmpty = errors.New("the report has no data")

// File is what Write rendered.
type File struct {
	Name        string // the download name: the report's title and the format's extension
	ContentType string
	Title       string // the report's
}

// Write renders a result of the project in format (a key of Formats) into w
// as it goes, never holding the whole file, and returns what it wrote. It
// renders at once, in the caller's goroutine, within the pool's bound of
// renders under way. A report without data gives ErrEmpty, with what w got
// to be thrown away; a result the project does not have, ErrNoResult.
func (s *Service) Write(ctx context.Context, projectID, resultID, format string, w io.Writer) (File, error) {
	f, ok := Formats[strings.ToUpper(format)]
	if !ok {
		return File{}, fmt.Errorf("unknown format %q", format)
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return File{}, ctx.Err()
	}
	began := time.Now()
	g, err := s.src.ResultGrid(ctx, projectID, resultID)
	if err != nil {
		return File{}, err
	}
	state := store.ExportDone
	err = s.renderCounted(w, g, f, s.cfg.Clock.Now())
	switch {
	case errors.Is(err, ErrEmpty):
		state = store.ExportEmpty
	case err != nil:
		state = store.ExportFailed
	}
	s.renderTime.WithLabelValues(f).Observe(time.Since(began).Seconds())
	s.exports.WithLabelValues(f, state).Inc()
	if err != nil {
		return File{}, err
	}
	return File{Name: FileName(store.Export{Title: g.Title, Format: f}), ContentType: render.ContentType(f), Title: g.Title}, nil
}

// write renders g into the export's file (written aside, then renamed into
// place) and returns its path. A grid or chart without rows gives ErrEmpty.
func (s *Service) write(e store.Export, g *grid.Grid) (string, error) {
	dir := filepath.Join(s.cfg.Dir, e.ProjectID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, e.ID+render.Extension(e.Format))
	tmp, err := os.CreateTemp(dir, e.ID+".*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if err := s.renderCounted(tmp, g, e.Format, e.Created); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// renderCounted renders g in format into w; a grid or chart without rows
// gives ErrEmpty once rendered.
func (s *Service) renderCounted(w io.Writer, g *grid.Grid, format string, at time.Time) error {
	rows := 0
	counted := *g
	counted.Rows = func(yield func(grid.Row, error) bool) {
		for r, err := range g.Rows {
			if err == nil {
				rows++
			}
			if !yield(r, err) {
				return
			}
		}
	}
	if err := s.renderTo(w, &counted, format, at); err != nil {
		return err
	}
	if rows == 0 {
		return ErrEmpty
	}
	return nil
}

func (s *Service) renderTo(w io.Writer, g *grid.Grid, format string, at time.Time) error {
	switch format {
	case render.FormatCSV:
		return render.CSV(w, g)
	case render.FormatXLS:
		return render.XLSX(w, g, at)
	case render.FormatPDF:
		return render.PDF(w, g, at)
	case render.FormatPNG:
		return render.PNG(w, g)
	case render.FormatHTML:
		return render.HTML(w, g, s.cfg.HTMLRows)
	}
	return fmt.Errorf("unknown format %q", format)
}

// pruneLoop removes expired exports and their files every few minutes.
func (s *Service) pruneLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		s.prune(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

func (s *Service) prune(ctx context.Context) {
	expired, err := s.st.ExpiredExports(ctx, s.cfg.Clock.Now())
	if err != nil {
		return
	}
	for _, e := range expired {
		if e.Path != "" {
			_ = os.Remove(e.Path)
		}
		if err := s.st.DeleteExport(ctx, e.ID); err != nil {
			s.log.Warn("prune export", "export", e.ID, "err", err)
		}
	}
}

// FileName is the download name of an export: the report's title with the
// format's extension.
func FileName(e store.Export) string {
	title := strings.TrimSpace(e.Title)
	if title == "" {
		title = "Report"
	}
	return title + render.Extension(e.Format)
}
