package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// Func is the work of a task. It returns the task's result (JSON, or nil) or an error.
// An *Error is reported to whoever polls the task as it is; any other error is logged and
// reported as an internal error.
type Func func(ctx context.Context) ([]byte, error)

// ErrBusy is returned by Start when the queue is full.
var ErrBusy = errors.New("too many tasks are waiting to run")

// Config configures a Pool. Zero values take the documented defaults.
type Config struct {
	// Workers is how many tasks run at once. Default 2.
	Workers int
	// Queue is how many tasks may wait for a worker. Default 64.
	Queue int
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Registerer receives the pool's metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer
}

// Pool runs tasks on a fixed number of workers.
type Pool struct {
	st   *store.Store
	cfg  Config
	log  *slog.Logger
	jobs chan job

	finished *prometheus.CounterVec

	mu      sync.Mutex
	stopped bool
}

type job struct {
	task store.Task
	fn   Func
}

// New returns a pool; Run starts its workers. Tasks started before Run wait for it.
func New(st *store.Store, cfg Config, log *slog.Logger) *Pool {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 64
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if log == nil {
		log = slog.Default()
	}
	finished := promauto.With(cfg.Registerer).NewCounterVec(prometheus.CounterOpts{
		Name: "herald_task_tasks_total",
		Help: "Maintenance tasks (validations, project exports and imports) finished, by type and state (OK, ERROR).",
	}, []string{"type", "state"})
	return &Pool{st: st, cfg: cfg, log: log, jobs: make(chan job, cfg.Queue), finished: finished}
}

// Declare names the kinds of task the pool runs, so that the count of each
// kind's finished tasks, by state, is exported at 0 before one finishes.
func (p *Pool) Declare(kinds ...string) {
	for _, k := range kinds {
		for _, state := range []string{store.TaskOK, store.TaskError} {
			p.finished.WithLabelValues(k, state)
		}
	}
}

// Messages reported for tasks that did not run to their end.
var (
	errRestarted = Errorf("The task was cut off: the service restarted before it finished.")
	errStopped   = Errorf("The task was cut off: the service stopped before it finished.")
	errBusy      = Errorf("The task was refused: too many tasks are waiting to run.")
)

// Recover marks the tasks that a previous process left running as failed, since nothing
// will finish them, and returns how many there were. Call it once, before Start.
func (p *Pool) Recover(ctx context.Context) (int64, error) {
	n, err := p.st.AbandonTasks(ctx, Messages(errRestarted), p.cfg.Clock.Now())
	if n > 0 {
		p.log.Warn("tasks cut off by a restart marked as failed", "tasks", n)
	}
	return n, err
}

// Start records a running task of t.ProjectID, of t.Kind, started by t.StartedBy, with
// the id t.ID (a new one when empty), and queues fn to run it. It returns the task as recorded, or ErrBusy (with the task
// recorded as failed) when too many tasks wait.
func (p *Pool) Start(ctx context.Context, t store.Task, fn Func) (store.Task, error) {
	if t.ID == "" {
		t.ID = store.NewID(24)
	}
	t.Status, t.Created = store.TaskRunning, p.cfg.Clock.Now()
	t.Messages, t.Result, t.Finished = nil, nil, time.Time{}
	if err := p.st.CreateTask(ctx, t); err != nil {
		return store.Task{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		select {
		case p.jobs <- job{task: t, fn: fn}:
			return t, nil
		default:
		}
	}
	p.finish(context.WithoutCancel(ctx), t, nil, errBusy)
	return t, ErrBusy
}

// Run runs queued tasks until ctx ends. A task running then sees its context end and is
// recorded as failed, as is every task still waiting.
func (p *Pool) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range p.cfg.Workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-p.jobs:
					if ctx.Err() != nil { // both were ready: stop
						p.finish(context.WithoutCancel(ctx), j.task, nil, errStopped)
						return
					}
					p.run(ctx, j)
				}
			}
		})
	}
	wg.Wait()
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	for {
		select {
		case j := <-p.jobs:
			p.finish(context.WithoutCancel(ctx), j.task, nil, errStopped)
		default:
			return nil
		}
	}
}

// run runs one task and records how it ended.
func (p *Pool) run(ctx context.Context, j job) {
	result, err := p.call(ctx, j)
	if err != nil && ctx.Err() != nil {
		err = errStopped
	}
	p.finish(context.WithoutCancel(ctx), j.task, result, err)
}

// call runs the task's function, turning a panic into an error.
func (p *Pool) call(ctx context.Context, j job) (result []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("task panicked", "task", j.task.ID, "kind", j.task.Kind, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return j.fn(ctx)
}

// finish records the outcome of a task.
func (p *Pool) finish(ctx context.Context, t store.Task, result []byte, err error) {
	t.Status, t.Result, t.Finished = store.TaskOK, result, p.cfg.Clock.Now()
	if err != nil {
		var te *Error
		if !errors.As(err, &te) {
			p.log.Error("task failed", "task", t.ID, "kind", t.Kind, "project", t.ProjectID, "err", err)
			te = &Error{Class: "Internal", Message: "Internal error; the task id %s identifies it in the log", Params: []string{t.ID}}
		}
		t.Status, t.Result, t.Messages = store.TaskError, nil, Messages(te)
	}
	p.finished.WithLabelValues(t.Kind, t.Status).Inc()
	if err := p.st.FinishTask(ctx, t); err != nil {
		p.log.Error("record task", "task", t.ID, "err", err)
	}
}

// Error is a failure that a task reports to whoever polls it, as the platform's error
// body: Message is a printf template filled from Params.
type Error struct {
	Class     string // the error class; "User" when empty
	Component string // the component; "md" when empty
	Message   string
	Params    []string
}

// Errorf returns a user's error with a message template and its parameters.
func Errorf(message string, params ...string) *Error {
	return &Error{Message: message, Params: params}
}

func (e *Error) Error() string {
	args := make([]any, len(e.Params))
	for i, p := range e.Params {
		args[i] = p
	}
	return fmt.Sprintf(e.Message, args...)
}

// Body is one message of a task status: the platform's error body, without a request id.
type Body struct {
	ErrorClass string   `json:"errorClass"`
	Component  string   `json:"component"`
	Message    string   `json:"message"`
	Parameters []string `json:"parameters"`
}

type message struct {
	Error Body `json:"error"`
}

// Messages encodes errors as the messages a task status carries: [{"error":{...}}].
func Messages(errs ...*Error) []byte {
	out := make([]message, len(errs))
	for i, e := range errs {
		b := Body{ErrorClass: e.Class, Component: e.Component, Message: e.Message, Parameters: e.Params}
		if b.ErrorClass == "" {
			b.ErrorClass = "User"
		}
		if b.Component == "" {
			b.Component = "md"
		}
		if b.Parameters == nil {
			b.Parameters = []string{}
		}
		out[i] = message{Error: b}
	}
	data, _ := json.Marshal(out) // plain strings always encode
	return data
}

// Decode reads the messages of a task; messages it cannot read give none.
func Decode(messages []byte) []Body {
	var list []message
	if err := json.Unmarshal(messages, &list); err != nil {
		return nil
	}
	out := make([]Body, len(list))
	for i, m := range list {
		out[i] = m.Error
	}
	return out
}

// Text is a message with its parameters filled in.
func (b Body) Text() string {
	return (&Error{Message: b.Message, Params: b.Parameters}).Error()
}
