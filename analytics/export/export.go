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

// Options configure a Service: the export section, whose zero values take
// DefaultConfig's, and the parts it works with.
type Options struct {
	Config
	// Dir holds the exported files. Required.
	Dir string
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Registerer receives the exporter's metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer
}

// Service renders exports with a bounded pool.
type Service struct {
	st    *store.Store
	src   Source
	cfg   Options
	log   *slog.Logger
	slots chan struct{} // one per render under way, Workers in all: the pool's and Write's
	wake  chan struct{} // holds a token while the queue may have exports for an idle worker

	exports    *prometheus.CounterVec
	renderTime *prometheus.HistogramVec

	// The queue of exports to render: a request adds to it and never
	// waits, and never leaves a goroutine behind. Past maxQueued exports
	// wait in the store only (they are recorded running), and the workers
	// read them from there once the queue has drained; those a stop leaves
	// are rendered by the next start.
	mu        sync.Mutex
	queue     []string
	queued    map[string]bool // the ids in queue
	rendering map[string]bool // the ids a worker renders
	spilled   bool            // an export was left out of the queue: read the store once it drains
	maxQueued int
}

// maxQueued bounds the exports queued in memory.
const maxQueued = 4096

// New returns an exporter; Run starts its pool.
func New(st *store.Store, src Source, cfg Options, log *slog.Logger) *Service {
	cfg.Config = cfg.withDefaults()
	cfg.Clock = clock.Or(cfg.Clock)
	f := promauto.With(cfg.Registerer)
	s := &Service{st: st, src: src, cfg: cfg, log: log, slots: make(chan struct{}, cfg.Workers), wake: make(chan struct{}, 1),
		queued: map[string]bool{}, rendering: map[string]bool{}, maxQueued: maxQueued,
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

// enqueue queues exports for the workers, at once: a full queue leaves them
// to the store, where the workers find them once they have drained it.
func (s *Service) enqueue(ids ...string) {
	s.mu.Lock()
	for _, id := range ids {
		switch {
		case s.queued[id] || s.rendering[id]:
		case len(s.queue) >= s.maxQueued:
			s.spilled = true
		default:
			s.queue = append(s.queue, id)
			s.queued[id] = true
		}
	}
	s.mu.Unlock()
	s.signal()
}

// signal wakes an idle worker, if none is woken yet.
func (s *Service) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next takes the next export to render, waiting for one until ctx ends.
// After a spill it reads the exports recorded running from the store once
// the queue has drained. The export is the caller's until it calls done.
func (s *Service) next(ctx context.Context) (string, bool) {
	for ctx.Err() == nil {
		s.mu.Lock()
		if len(s.queue) > 0 {
			id := s.queue[0]
			s.queue = s.queue[1:]
			delete(s.queued, id)
			s.rendering[id] = true
			more := len(s.queue) > 0 || s.spilled
			s.mu.Unlock()
			if more {
				s.signal() // another worker takes the next
			}
			return id, true
		}
		spilled := s.spilled
		s.spilled = false
		s.mu.Unlock()
		if spilled && s.requeue(ctx) {
			continue
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		}
	}
	return "", false
}

// requeue queues the exports recorded running: those left out of a full
// queue, or by a previous process. It says whether it could read them; when
// not, they are read again at the next request or on the next start.
func (s *Service) requeue(ctx context.Context) bool {
	err := s.queueRunning(ctx)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("read the exports waiting", "err", err)
		s.mu.Lock()
		s.spilled = true
		s.mu.Unlock()
	}
	return err == nil
}

// queueRunning queues the exports the store records running.
func (s *Service) queueRunning(ctx context.Context) error {
	left, err := s.st.RunningExports(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, len(left))
	for i, e := range left {
		ids[i] = e.ID
	}
	s.enqueue(ids...)
	return nil
}

// done tells that a worker has rendered export id.
func (s *Service) done(id string) {
	s.mu.Lock()
	delete(s.rendering, id)
	s.mu.Unlock()
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
// unfinished are rendered again, and those queued before it started.
func (s *Service) Run(ctx context.Context) error {
	s.mu.Lock()
	s.spilled = false // the read below finds them
	s.mu.Unlock()
	if err := s.queueRunning(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Go(func() {
			for {
				id, ok := s.next(ctx)
				if !ok {
					return
				}
				s.slots <- struct{}{}
				s.render(ctx, id)
				<-s.slots
				s.done(id)
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
