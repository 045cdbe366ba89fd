package xtab

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/query"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// ErrNoResult is returned for a result the project does not have (or no longer has).
var ErrNoResult = export.ErrNoResult

// ErrStopped is returned when a result is needed after the executor stopped.
var ErrStopped = errors.New("report execution has stopped")

// FailedError is a result whose computation failed.
type FailedError struct {
	ID  string
	Msg string
}

func (e *FailedError) Error() string { return "report execution failed: " + e.Msg }

// Config configures an Executor. Zero values take the documented defaults.
type Config struct {
	// PerProject is how many results of one project are computed at once. Default 2.
	PerProject int `yaml:"perProject"`
	// Timeout bounds the computation of one result, waiting included. Default 5m.
	Timeout time.Duration `yaml:"timeout"`
	// Retention is how long a result is kept after it was last asked for. Default 24h.
	Retention time.Duration `yaml:"retention"`
	// MaxSQL bounds the SQL a report's metrics compile to, in bytes; a report
	// past it is refused, naming the metric. Default query.DefaultMaxSQL.
	MaxSQL int `yaml:"maxQueryBytes"`

	// Dir holds the result files. Required.
	Dir string `yaml:"-"`
	// Clock is the time; nil means the real clock.
	Clock clock.Clock `yaml:"-"`
}

// DefaultConfig returns the documented defaults, the execution section of the configuration.
func DefaultConfig() Config {
	return Config{PerProject: 2, Timeout: 5 * time.Minute, Retention: 24 * time.Hour, MaxSQL: query.DefaultMaxSQL}
}

// Validate names the wrong key.
func (c Config) Validate() error {
	var errs []error
	if c.PerProject < 1 {
		errs = append(errs, errors.New("perProject: must be at least 1"))
	}
	if c.MaxSQL < 4096 {
		errs = append(errs, fmt.Errorf("maxQueryBytes: must be at least 4096, got %d", c.MaxSQL))
	}
	for key, d := range map[string]time.Duration{"timeout": c.Timeout, "retention": c.Retention} {
		if d < time.Second {
			errs = append(errs, fmt.Errorf("%s: must be at least 1s, got %s", key, d))
		}
	}
	return errors.Join(errs...)
}

// Executor executes reports and keeps their results.
type Executor struct {
	st  *store.Store
	md  *analytics.Service
	cfg Config
	log *slog.Logger

	base context.Context // computations run under it; Run's end cancels it
	stop context.CancelFunc
	wg   sync.WaitGroup

	// finds serialize looking for a result and creating it, so that equal
	// executions share one computation; by the result's key (findLock), so
	// that different ones, such as a burst's metrics, do not wait for each
	// other's writes.
	finds    [64]sync.Mutex
	findSeed maphash.Seed

	mu     sync.Mutex
	closed bool
	jobs   map[string]chan struct{} // results computing in this process, closed when done
	sems   map[string]chan struct{} // per project
}

// New returns an executor; Run prunes old results and, when it ends, stops computing.
func New(st *store.Store, md *analytics.Service, cfg Config, log *slog.Logger) *Executor {
	d := DefaultConfig()
	cfg.PerProject = cmp.Or(max(cfg.PerProject, 0), d.PerProject)
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), d.Timeout)
	cfg.Retention = cmp.Or(max(cfg.Retention, 0), d.Retention)
	cfg.MaxSQL = cmp.Or(max(cfg.MaxSQL, 0), d.MaxSQL)
	cfg.Clock = clock.Or(cfg.Clock)
	base, stop := context.WithCancel(context.Background())
	return &Executor{st: st, md: md, cfg: cfg, log: log, base: base, stop: stop, findSeed: maphash.MakeSeed(),
		jobs: map[string]chan struct{}{}, sems: map[string]chan struct{}{}}
}

// Result is an execution's answer: an object of its own (ID, Author, Created) over the
// result that holds, or will hold, the data (DataID), which equal executions share.
type Result struct {
	ID        string
	DataID    string
	ProjectID string
	Author    string // user id
	Created   time.Time
	// Definition is the URI of the definition executed; empty for an inline one.
	Definition string
	View       View
}

// URI is the result's URI, which the exporter takes.
func (r Result) URI() string { return "/svc/md/" + r.ProjectID + "/obj/" + r.ID }

// DataResultURI is where the result's data is read.
func (r Result) DataResultURI() string { return "/svc/md/" + r.ProjectID + "/dataResult/" + r.DataID }

// Execute compiles what src names and starts computing it, or finds the result of an
// equal execution at the project's current data version. The execution sees the slice
// of the data its author's mandatory user filters leave (or src.Slice): every
// metric of it meets all of them, and only an execution of the same slice shares its
// result. Errors in the request are *analytics.InputError (naming the field) and
// *analytics.NotFoundError.
func (e *Executor) Execute(ctx context.Context, pid, author string, src Source) (Result, error) {
	version, err := e.md.DataVersion(ctx, pid)
	if err != nil {
		return Result{}, err
	}
	p, err := e.compile(ctx, pid, author, src)
	if err != nil {
		return Result{}, err
	}
	data, digest, err := p.encode()
	if err != nil {
		return Result{}, err
	}
	now := e.cfg.Clock.Now()
	obj := store.ResultObject{ID: store.NewID(24), ProjectID: pid, Author: author, Created: now}
	r, err := e.findOrCreate(ctx, p, store.Result{ID: store.NewID(24), ProjectID: pid, Digest: digest, DataVersion: version,
		State: store.ResultRunning, Title: p.View.ReportName, Author: author, Plan: data, Created: now,
		Expires: now.Add(e.cfg.Retention)}, obj)
	if err != nil {
		return Result{}, err
	}
	return Result{ID: obj.ID, DataID: r.ID, ProjectID: pid, Author: author, Created: now, Definition: p.Definition, View: p.View}, nil
}

// Evaluate computes what src names as Execute does, as author and over the
// same slice of the data, within the project's bound and the timeout, and
// returns its grid; but in memory: it keeps no result for a later request,
// and so writes nothing. The engine evaluates its conditions' metrics so,
// many at one instant. A computation that fails is a *FailedError.
func (e *Executor) Evaluate(ctx context.Context, pid, author string, src Source) (*grid.Grid, error) {
	p, err := e.compile(ctx, pid, author, src)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	release, err := e.acquire(ctx, pid)
	if err != nil {
		return nil, &FailedError{Msg: e.failure(err)}
	}
	defer release()
	t, err := e.table(ctx, pid, p)
	if err != nil {
		return nil, &FailedError{Msg: e.failure(err)}
	}
	return gridOf(p, t), nil
}

// compile plans what src names over the slice of the data author sees.
func (e *Executor) compile(ctx context.Context, pid, author string, src Source) (*plan, error) {
	d, err := e.resolve(ctx, pid, src)
	if err != nil {
		return nil, err
	}
	slice, err := e.slice(ctx, pid, author, src)
	if err != nil {
		return nil, err
	}
	return e.plan(ctx, pid, d, slice)
}

// slice is the part of the data an execution of src by author sees.
func (e *Executor) slice(ctx context.Context, pid, author string, src Source) (analytics.Slice, error) {
	if src.Slice != nil {
		return *src.Slice, nil
	}
	return e.md.UserSlice(ctx, pid, author)
}

// Visible reports, with ErrNoResult, a result (an execution's object or the
// result itself) that user may not read: one of another slice of the data
// than the one user's mandatory user filters leave now. A result that does
// not exist is ErrNoResult too.
func (e *Executor) Visible(ctx context.Context, pid, user, id string) error {
	did, err := e.dataID(ctx, pid, id)
	if err != nil {
		return err
	}
	if did == "" {
		return ErrNoResult
	}
	r, err := e.st.ResultByID(ctx, did)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoResult
	}
	if err != nil {
		return err
	}
	p, err := decodePlan(r.Plan)
	if err != nil {
		return err
	}
	sl, err := e.md.UserSlice(ctx, pid, user)
	if err != nil {
		return err
	}
	if sl.Key() != p.Slice {
		return ErrNoResult
	}
	return nil
}

// findOrCreate returns the result of the project's data version with fresh's
// digest, extended, or creates fresh; either way, one still running is being
// computed. The caller's object is stored with the result in the same write.
func (e *Executor) findOrCreate(ctx context.Context, p *plan, fresh store.Result, obj store.ResultObject) (store.Result, error) {
	mu := e.findLock(fresh.ProjectID, fresh.Digest, fresh.DataVersion)
	mu.Lock()
	defer mu.Unlock()
	r, err := e.st.CachedResult(ctx, fresh.ProjectID, fresh.Digest, fresh.DataVersion, fresh.Created)
	switch {
	case err == nil:
		obj.ResultID = r.ID
		if err := e.st.ShareResult(ctx, obj, fresh.Expires); err != nil {
			return store.Result{}, err
		}
		if r.State == store.ResultRunning {
			e.start(r, p)
		}
		return r, nil
	case errors.Is(err, store.ErrNotFound):
		obj.ResultID = fresh.ID
		if err := e.st.CreateResult(ctx, fresh, obj); err != nil {
			return store.Result{}, err
		}
		e.start(fresh, p)
		return fresh, nil
	}
	return store.Result{}, err
}

// resultKey is what equal executions share: the project, the plan's digest
// and the data version.
type resultKey struct {
	pid, digest string
	version     int64
}

// findLock is the lock of the results with the key (project, digest, data version).
func (e *Executor) findLock(pid, digest string, version int64) *sync.Mutex {
	h := maphash.Comparable(e.findSeed, resultKey{pid, digest, version})
	return &e.finds[h%uint64(len(e.finds))]
}

// Object returns the answer of an earlier execution by its id, as Execute returned it;
// ErrNoResult when the project has no such object (or its result expired).
func (e *Executor) Object(ctx context.Context, pid, id string) (Result, error) {
	o, err := e.st.ResultObjectByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && o.ProjectID != pid:
		return Result{}, ErrNoResult
	case err != nil:
		return Result{}, err
	}
	r, err := e.st.ResultByID(ctx, o.ResultID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Result{}, ErrNoResult
	case err != nil:
		return Result{}, err
	}
	p, err := decodePlan(r.Plan)
	if err != nil {
		return Result{}, err
	}
	return Result{ID: o.ID, DataID: r.ID, ProjectID: pid, Author: o.Author, Created: o.Created, Definition: p.Definition,
		View: p.View}, nil
}

// dataID returns the id of the shared result an id names: a result object's, or a
// result's own; "" when the project has neither.
func (e *Executor) dataID(ctx context.Context, pid, id string) (string, error) {
	o, err := e.st.ResultObjectByID(ctx, id)
	switch {
	case err == nil && o.ProjectID == pid:
		return o.ResultID, nil
	case err == nil:
		return "", nil
	case !errors.Is(err, store.ErrNotFound):
		return "", err
	}
	r, err := e.st.ResultByID(ctx, id)
	switch {
	case err == nil && r.ProjectID == pid:
		return r.ID, nil
	case err == nil || errors.Is(err, store.ErrNotFound):
		return "", nil
	}
	return "", err
}

// start computes a result off the request path unless it is already computing here, and
// returns the channel closed when it is done; nil once the executor stopped.
func (e *Executor) start(r store.Result, p *plan) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	if done, ok := e.jobs[r.ID]; ok {
		return done
	}
	done := make(chan struct{})
	e.jobs[r.ID] = done
	e.wg.Go(func() {
		e.compute(r, p)
		e.mu.Lock()
		delete(e.jobs, r.ID)
		e.mu.Unlock()
		close(done)
	})
	return done
}

// compute runs a result's query within the timeout and the project's bound, and records
// the outcome. When the executor stops first, the result stays running: the next process
// computes it when it is asked for.
func (e *Executor) compute(r store.Result, p *plan) {
	ctx, cancel := context.WithTimeout(e.base, e.cfg.Timeout)
	defer cancel()
	if cur, err := e.st.ResultByID(e.base, r.ID); err == nil && cur.State != store.ResultRunning {
		return // finished by a computation that ended as this one started
	}
	release, err := e.acquire(ctx, r.ProjectID)
	if err == nil {
		err = e.run(ctx, &r, p)
		release()
	}
	if e.base.Err() != nil {
		return
	}
	if err != nil {
		r.State, r.Error = store.ResultFailed, e.failure(err)
		e.log.Warn("report execution failed", "project", r.ProjectID, "result", r.ID, "err", err)
	}
	r.Finished = e.cfg.Clock.Now()
	if err := e.st.FinishResult(context.WithoutCancel(ctx), r); err != nil {
		e.log.Error("record report result", "result", r.ID, "err", err)
	}
}

// failure is what a result whose computation ended in err records.
func (e *Executor) failure(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("the report took longer than %s to compute", e.cfg.Timeout)
	}
	return err.Error()
}

// run computes a result into its file.
func (e *Executor) run(ctx context.Context, r *store.Result, p *plan) error {
	t, err := e.table(ctx, r.ProjectID, p)
	if err != nil {
		return err
	}
	if t == nil {
		r.State = store.ResultEmpty
		return nil
	}
	path := filepath.Join(e.cfg.Dir, r.ProjectID, r.ID+".xtab")
	if err := t.write(path); err != nil {
		return err
	}
	r.State, r.Path, r.Rows, r.Columns = store.ResultDone, path, len(t.rows.headers), len(t.cols.headers)
	return nil
}

// table runs a plan's query and pivots its rows; nil when it has none.
func (e *Executor) table(ctx context.Context, pid string, p *plan) (*table, error) {
	var f *flat
	err := e.md.Query(ctx, pid, p.SQL, p.args(), func(rows *sql.Rows) error {
		var err error
		f, err = scanFlat(p, rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(f.attrs) == 0 {
		return nil, nil
	}
	return pivot(p, f)
}

// acquire takes one of the project's places to compute in.
func (e *Executor) acquire(ctx context.Context, pid string) (func(), error) {
	e.mu.Lock()
	sem := e.sems[pid]
	if sem == nil {
		sem = make(chan struct{}, e.cfg.PerProject)
		e.sems[pid] = sem
	}
	e.mu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// result returns a result of the project, making sure one that is still running is
// being computed.
func (e *Executor) result(ctx context.Context, pid, id string) (store.Result, chan struct{}, error) {
	r, err := e.st.ResultByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.ProjectID != pid) {
		return store.Result{}, nil, ErrNoResult
	}
	if err != nil || r.State != store.ResultRunning {
		return r, nil, err
	}
	p, err := decodePlan(r.Plan)
	if err != nil {
		return r, nil, err
	}
	done := e.start(r, p)
	if done == nil {
		return r, nil, ErrStopped
	}
	return r, done, nil
}

// wait returns a result once it is no longer running.
func (e *Executor) wait(ctx context.Context, pid, id string) (store.Result, error) {
	for range 3 {
		r, done, err := e.result(ctx, pid, id)
		if err != nil || done == nil {
			return r, err
		}
		select {
		case <-done:
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
	return store.Result{}, fmt.Errorf("result %s: its computations end without recording it", id)
}

// hold is how long DataResult waits for a result still computing before it answers
// that it is: most results are ready by then, and the client need not poll again.
const hold = time.Second

// DataResult returns a page of a result: its state, and the page once it is done. A
// result still computing is waited for a moment. A result that failed is a *FailedError.
func (e *Executor) DataResult(ctx context.Context, pid, id string, pg Page) (string, *XTab, error) {
	r, done, err := e.result(ctx, pid, id)
	if err != nil {
		return "", nil, err
	}
	if done != nil {
		t := e.cfg.Clock.NewTimer(hold)
		select {
		case <-done:
			t.Stop()
			if r, _, err = e.result(ctx, pid, id); err != nil {
				return "", nil, err
			}
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
		}
	}
	switch r.State {
	case store.ResultFailed:
		return r.State, nil, &FailedError{ID: r.ID, Msg: r.Error}
	case store.ResultDone:
		p, err := decodePlan(r.Plan)
		if err != nil {
			return "", nil, err
		}
		x, err := readPage(r.Path, p, pg)
		if lost(err) {
			return store.ResultRunning, nil, e.recompute(ctx, r, p)
		}
		return r.State, x, err
	}
	return r.State, nil, nil
}

// lost reports whether a result's file is gone or unreadable, as a crash can leave it.
func lost(err error) bool { return errors.Is(err, os.ErrNotExist) || errors.Is(err, errCorrupt) }

// recompute computes again a result whose file was lost.
func (e *Executor) recompute(ctx context.Context, r store.Result, p *plan) error {
	e.log.Warn("report result file lost; computing it again", "result", r.ID, "path", r.Path)
	r.State, r.Path, r.Error, r.Rows, r.Columns, r.Finished = store.ResultRunning, "", "", 0, 0, time.Time{}
	if err := e.st.FinishResult(ctx, r); err != nil {
		return err
	}
	if e.start(r, p) == nil {
		return ErrStopped
	}
	return nil
}

// Run removes expired results every few minutes until ctx ends, then stops computing
// and waits for the computations in flight to end.
func (e *Executor) Run(ctx context.Context) error {
	t := e.cfg.Clock.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		e.prune(ctx)
		select {
		case <-ctx.Done():
			e.mu.Lock()
			e.closed = true
			e.mu.Unlock()
			e.stop()
			e.wg.Wait()
			return nil
		case <-t.C():
		}
	}
}

func (e *Executor) prune(ctx context.Context) {
	expired, err := e.st.ExpiredResults(ctx, e.cfg.Clock.Now())
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("list expired results", "err", err)
		}
		return
	}
	for _, r := range expired {
		e.mu.Lock()
		_, running := e.jobs[r.ID]
		e.mu.Unlock()
		if running {
			continue
		}
		if r.Path != "" {
			_ = removeFile(r.Path)
		}
		if err := e.st.DeleteResult(ctx, r.ID); err != nil {
			e.log.Warn("prune result", "result", r.ID, "err", err)
		}
	}
}
