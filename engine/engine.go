package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/internal/gather"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// Config configures the engine: its tunables, the engine section of the
// configuration (zero values take DefaultConfig's), and the parts it works with.
type Config struct {
	// Workers is how many runs execute at once. Default 8.
	Workers int `yaml:"workers"`
	// RunTimeout bounds one run, from claim to handover. Default 2m.
	RunTimeout time.Duration `yaml:"runTimeout"`
	// MetricTimeout bounds one metric execution. Default 1m.
	MetricTimeout time.Duration `yaml:"metricTimeout"`
	// Grace is how late a missed fire may still run after downtime. Default 15m.
	Grace time.Duration `yaml:"grace"`
	// Retention is how long runs, and the files they attach, are kept; a run
	// with a delivery still pending stays until it is final. Default 90 days.
	Retention time.Duration `yaml:"retention"`

	// FilesDir holds the files runs attach, one folder per report and instant,
	// shared by the runs of that instant. Required.
	FilesDir string `yaml:"-"`
	// Clock is the time the engine runs on. Default: the real clock.
	Clock clock.Clock `yaml:"-"`
	// Registerer receives the engine's metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer `yaml:"-"`
	// Domain holds the rules of subscriptions and runs, and the access rules
	// each fire is decided by. Required.
	Domain *notify.Service `yaml:"-"`
	// Exclusive says that no other engine shares the store (the process holds the
	// data folder's lock): at start, every run another incarnation left running is a
	// dead predecessor's and is adopted at once, not after RunTimeout.
	Exclusive bool `yaml:"-"`
}

// DefaultConfig returns the documented defaults of the tunables.
func DefaultConfig() Config {
	return Config{Workers: 8, RunTimeout: 2 * time.Minute, MetricTimeout: time.Minute, Grace: 15 * time.Minute,
		Retention: 90 * 24 * time.Hour}
}

// Validate checks the tunables, naming the key.
func (c Config) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, errors.New("workers: must be at least 1"))
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"runTimeout", c.RunTimeout}, {"metricTimeout", c.MetricTimeout}, {"grace", c.Grace}, {"retention", c.Retention}} {
		if d.v < time.Second {
			errs = append(errs, fmt.Errorf("%s: must be at least 1s, got %s", d.key, d.v))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) defaults() {
	d := DefaultConfig()
	c.Workers = cmp.Or(c.Workers, d.Workers)
	c.RunTimeout = cmp.Or(c.RunTimeout, d.RunTimeout)
	c.MetricTimeout = cmp.Or(c.MetricTimeout, d.MetricTimeout)
	c.Grace = cmp.Or(c.Grace, d.Grace)
	c.Retention = cmp.Or(c.Retention, d.Retention)
	c.Clock = clock.Or(c.Clock)
}

// Engine fires subscriptions: a scheduler and a pool of runners.
type Engine struct {
	st         *store.Store
	analytics  Analytics
	runFiles   fileStore // the files runs attach
	cfg        Config
	log        *slog.Logger
	handedOver func() // tells the delivery relay that the outbox has rows
	domain     *notify.Service
	claimed    chan store.Run // claimed runs waiting for a worker
	sched      *Scheduler
	// Executions and files shared by the runs of an instant, whoever they run
	// as: the decision lets each run's principal have it, and an execution's
	// result is the same for every principal of the same slice of the data.
	memo     *memo[sliceKey, Value] // metric executions by (metric, slice, instant)
	reports  *memo[sliceKey, ReportResult]
	files    *memo[fileKey, store.Attachment]
	programs programCache
	// Lookups a burst of runs shares, kept for a second.
	subs     *recent[string, store.Subscription]
	owners   *recent[ownerKey, owner]
	objects  *recent[objectKey, notify.Object]
	channels *recent[string, store.Channel]
	fires    *fireQueue
	metrics  *metrics
	// incarnation names this engine in the runs it claims.
	incarnation string

	// sending guards claimed against a send now racing the pipeline's stop.
	sending    sync.RWMutex
	pipelineUp bool

	mu      sync.Mutex
	started bool
	early   []string // subscriptions changed while Run was loading them, applied once it has
}

// New returns an engine over st that evaluates and exports through the
// analytics port, as each subscription's owner, and calls handedOver after
// each handover. cfg.Domain and cfg.FilesDir are required.
func New(st *store.Store, analytics Analytics, cfg Config, log *slog.Logger, handedOver func()) (*Engine, error) {
	switch {
	case analytics == nil:
		return nil, errors.New("engine: no analytics to evaluate through")
	case cfg.Domain == nil:
		return nil, errors.New("engine: no domain rules (Config.Domain)")
	case cfg.FilesDir == "":
		return nil, errors.New("engine: no folder for the files runs attach (Config.FilesDir)")
	}
	cfg.defaults()
	if handedOver == nil {
		handedOver = func() {}
	}
	e := &Engine{st: st, analytics: analytics, runFiles: fileStore{dir: cfg.FilesDir, now: cfg.Clock.Now}, cfg: cfg, log: log,
		handedOver: handedOver, domain: cfg.Domain, fires: newFireQueue(maxQueuedFires), claimed: make(chan store.Run, 4096),
		subs: newRecent[string, store.Subscription](time.Second), owners: newRecent[ownerKey, owner](time.Second),
		objects: newRecent[objectKey, notify.Object](time.Second), channels: newRecent[string, store.Channel](time.Second),
		metrics: newMetrics(cfg.Registerer), incarnation: store.NewID(16)}
	e.metrics.startAtZero()
	e.memo = newMemo[sliceKey, Value](time.Hour, cfg.MetricTimeout, e.metrics.cacheHits.Inc)
	e.reports = newMemo[sliceKey, ReportResult](time.Hour, cfg.RunTimeout, e.metrics.reportHits.Inc)
	e.files = newMemo[fileKey, store.Attachment](time.Hour, cfg.RunTimeout, e.metrics.reportHits.Inc)
	e.sched = NewScheduler(func(fs []Fire) {
		_ = e.fires.push(fs...) // waits only while maxQueuedFires are queued, until the engine stops
		now := e.now()
		for _, f := range fs {
			e.metrics.fired(f.At, now)
		}
	}, cfg.Clock)
	return e, nil
}

// Run loads every enabled subscription, runs what was missed while the
// service was down, and fires subscriptions until ctx ends. Runs in flight
// finish before it returns.
func (e *Engine) Run(ctx context.Context) error {
	subs, err := e.st.EnabledSubscriptions(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return fmt.Errorf("load subscriptions: %w", err)
	}
	last, err := e.st.LastRunTimes(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	now := e.now()
	var missed []Fire
	for _, sub := range subs {
		if f, ok := e.catchUp(ctx, sub, last[sub.ID], now); ok {
			missed = append(missed, f)
		}
		e.schedule(sub, now)
	}
	e.mu.Lock()
	e.started = true
	early := e.early
	e.early = nil
	e.mu.Unlock()
	for _, id := range early {
		e.apply(id) // it may have changed after the load read it
	}
	e.log.Info("engine started", "subscriptions", len(subs), "triggers", e.sched.Len())

	var wg sync.WaitGroup
	wg.Go(func() { e.pruneLoop(ctx) })
	wg.Go(func() { _ = e.fires.push(missed...) })
	pipeline := e.runPipeline(ctx)
	stopQueue := context.AfterFunc(ctx, e.fires.stop)
	defer stopQueue()
	err = e.sched.Run(ctx)
	pipeline()
	wg.Wait()
	return err
}

// maxFinishBatch bounds the outcomes the finisher records in one transaction.
// The finisher shares the single writer with the claims, the ledger and the
// executions' results, and in a large burst it is what the workers wait for:
// each transaction first waits its turn at the writer, so larger batches wait
// fewer times. A batch of 1,024 alerts holds the writer for tens of
// milliseconds.
const maxFinishBatch = 1024

// maxWorkerBatch bounds the runs a worker takes at once from those waiting,
// reading their subscriptions' states in one query.
const maxWorkerBatch = 32

// runPipeline starts the stages a fire goes through and returns a function
// that waits for them to stop once ctx ends. A claimer claims the due
// instants in batches, the workers process claimed runs, and a finisher
// records their outcomes in batches: one transaction for many runs, so a
// burst of fires costs few writes. When ctx ends, claimed runs not yet started
// stay claimed and running, and the next start takes them over.
func (e *Engine) runPipeline(ctx context.Context) (wait func()) {
	claimed := e.claimed
	finished := make(chan store.Finish, 4096)
	var claimer, workers, finisher sync.WaitGroup
	var orphans, prefetches sync.WaitGroup
	orphans.Go(func() { e.adoptOrphans(ctx, claimed) })
	claimer.Go(func() {
		batch := make([]Fire, 0, 512)
		for {
			var err error
			if batch, err = e.fires.take(ctx, batch); err != nil {
				return
			}
			runs := e.claim(ctx, batch)
			e.readSubscriptions(ctx, runs)
			prefetches.Go(func() { e.prefetch(ctx, runs) })
			for _, run := range runs {
				claimed <- run
			}
		}
	})
	for range e.cfg.Workers {
		workers.Go(func() { e.work(ctx, claimed, finished) })
	}
	finisher.Go(func() {
		batch := make([]store.Finish, 0, maxFinishBatch)
		for f := range finished {
			batch = gather.Ready(finished, append(batch[:0], f), maxFinishBatch)
			e.finish(ctx, batch)
		}
	})
	e.sending.Lock()
	e.pipelineUp = true
	e.sending.Unlock()
	return func() {
		claimer.Wait()
		orphans.Wait()
		e.sending.Lock()
		e.pipelineUp = false
		close(claimed)
		e.sending.Unlock()
		workers.Wait()
		close(finished)
		finisher.Wait()
		prefetches.Wait()
	}
}

// work processes claimed runs until claimed closes and sends their outcomes
// to finished. It takes a run and its share of the others waiting, so that
// the other workers have theirs, and processes them as a batch.
func (e *Engine) work(ctx context.Context, claimed <-chan store.Run, finished chan<- store.Finish) {
	batch := make([]store.Run, 0, maxWorkerBatch)
	for run := range claimed {
		n := min(maxWorkerBatch, 1+len(claimed)/e.cfg.Workers)
		batch = gather.Ready(claimed, append(batch[:0], run), n)
		e.processAll(ctx, batch, func(f store.Finish) { finished <- f })
	}
}

func (e *Engine) now() time.Time { return e.cfg.Clock.Now() }

// SubscriptionChanged applies a created, changed or deleted subscription to
// the schedule at once.
func (e *Engine) SubscriptionChanged(id string) {
	e.mu.Lock()
	started := e.started
	if !started {
		// Run loads every subscription when it starts, but may have read this one before
		// the change: it applies the change again once loaded.
		e.early = append(e.early, id)
	}
	e.mu.Unlock()
	if started {
		e.apply(id)
	}
}

// apply reloads subscription id into the scheduler, or removes it if it is gone.
func (e *Engine) apply(id string) {
	ctx := context.Background()
	e.subs.forget(id)
	sub, err := e.st.SubscriptionByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		e.sched.Remove(id)
		return
	}
	if err != nil {
		e.log.Error("reload subscription", "subscription", id, "err", err)
		return
	}
	e.schedule(sub, e.now())
}

// schedule sets the subscription's triggers in the scheduler, logging any it cannot use.
func (e *Engine) schedule(sub store.Subscription, after time.Time) {
	if err := e.sched.Set(sub, after); err != nil {
		e.log.Error("subscription has triggers that cannot fire; they are left out", "subscription", sub.ID, "err", err)
	}
}

// subscription returns the subscription, read at most a second ago.
func (e *Engine) subscription(ctx context.Context, id string) (store.Subscription, error) {
	return e.subs.get(ctx, id, func(ctx context.Context) (store.Subscription, error) { return e.st.SubscriptionByID(ctx, id) })
}

// readSubscriptions reads the subscriptions of claimed runs in one query and
// remembers them for the runs and the metric prefetch: a burst then reads
// each subscription once per batch of runs, not once per run. A failed read
// leaves each run to read its own.
func (e *Engine) readSubscriptions(ctx context.Context, runs []store.Run) {
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.SubscriptionID
	}
	subs, err := e.st.SubscriptionsByID(ctx, ids)
	if err != nil {
		return
	}
	for _, id := range ids {
		if sub, ok := subs[id]; ok {
			e.subs.put(id, sub, nil)
		} else {
			e.subs.put(id, store.Subscription{}, store.ErrNotFound) // deleted since its fire
		}
	}
}

// sliceKey names a metric or a report of a slice of the data: the engine
// shares one execution per (metric or report, slice, instant).
type sliceKey struct {
	uri string
	f   Filters
}

// executeMetric is the shared work of executing a metric as p.
func (e *Engine) executeMetric(p Principal, uri string) func(context.Context) (Value, error) {
	return func(ctx context.Context) (Value, error) {
		e.metrics.executions.Inc()
		return e.analytics.EvaluateMetric(ctx, p, uri)
	}
}

// prefetch starts the metric executions the claimed runs will need, each
// distinct metric once and many at a time, so the runs find their values
// ready instead of waiting on them one worker at a time. A run whose owner
// the decision refuses starts none. Once ctx ends it starts no more; it
// returns when those it started have (a shared execution has
// Config.MetricTimeout).
func (e *Engine) prefetch(ctx context.Context, runs []store.Run) {
	seen := make(map[memoKey[sliceKey]]bool)
	sem := make(chan struct{}, 16)
	var executions sync.WaitGroup
	defer executions.Wait()
	for _, run := range runs {
		sub, err := e.subscription(ctx, run.SubscriptionID)
		if err != nil {
			continue
		}
		p, err := e.programs.get(sub.Def)
		if err != nil {
			continue
		}
		d, err := e.authorize(ctx, sub, p, run.ScheduledAt)
		if err != nil || !d.allowed() || !ownerSends(sub) {
			continue
		}
		principal := d.as
		for _, uri := range p.metrics {
			key := memoKey[sliceKey]{sliceKey{uri, principal.Filters}, run.ScheduledAt.UnixNano()}
			if seen[key] {
				continue
			}
			seen[key] = true
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			executions.Go(func() {
				defer func() { <-sem }()
				_, _ = e.memo.do(ctx, key.key, run.ScheduledAt, e.executeMetric(principal, uri))
			})
		}
	}
}

// adoptOrphans takes over runs that a process claimed and never finished
// (it crashed), at start and then every RunTimeout. At start, an Exclusive
// engine adopts every run another incarnation left running at once: nobody
// else can be running it. Otherwise, and later on, a run still running
// longer than RunTimeout has no live owner: every owner fails its runs at
// that age. Taking one over is a compare-and-swap on the run, so two engines
// never both adopt it. An orphan still within the grace window is processed;
// an older one is recorded as failed.
func (e *Engine) adoptOrphans(ctx context.Context, claimed chan<- store.Run) {
	for first := true; ; first = false {
		runs, err := e.st.RunningRuns(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.Error("find unfinished runs", "err", err)
		}
		now := e.now()
		for _, run := range runs {
			dead := first && e.cfg.Exclusive && run.Incarnation != e.incarnation
			if !dead && now.Sub(run.Started) <= e.cfg.RunTimeout+time.Minute {
				continue // maybe still under way in another process
			}
			ok, err := e.st.TakeOverRun(ctx, run, e.incarnation, now)
			if err != nil || !ok {
				continue
			}
			if now.Sub(run.ScheduledAt) > e.cfg.Grace {
				run.State, run.Error, run.Finished = store.RunFailed, "the service stopped before the run finished", now
				e.finish(ctx, []store.Finish{{Run: run}})
				continue
			}
			run.Started = now
			select {
			case claimed <- run:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-e.cfg.Clock.After(e.cfg.RunTimeout):
		}
	}
}

// pruneLoop deletes runs older than the retention period, and their files, daily;
// what a delivery still pending needs stays until it is sent or given up.
func (e *Engine) pruneLoop(ctx context.Context) {
	for {
		limit := e.now().Add(-e.cfg.Retention)
		if n, err := e.st.PruneRuns(ctx, limit); err != nil && ctx.Err() == nil {
			e.log.Warn("prune runs", "err", err)
		} else if n > 0 {
			e.log.Info("pruned old runs", "runs", n)
		}
		if err := e.pruneFiles(ctx, limit); err != nil && ctx.Err() == nil {
			e.log.Warn("prune attached files", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-e.cfg.Clock.After(24 * time.Hour):
		}
	}
}

// Loaded reports whether Run has loaded the subscriptions into the schedule.
func (e *Engine) Loaded() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}
