package startstop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Unit is a long-lived part of a process. Run works until ctx ends and
// returns once every goroutine it started has returned: its error is a
// failure, except context.Canceled once ctx has ended (stopped while
// starting).
type Unit struct {
	Name string
	Run  func(ctx context.Context) error
}

// ErrStopped is Start's answer once the group has stopped.
var ErrStopped = errors.New("startstop: the group has stopped")

// Group is a set of started units. Its zero value is not usable: call New.
type Group struct {
	log    *slog.Logger
	failed chan struct{}
	fail   sync.Once

	mu      sync.Mutex
	units   []*running
	stopped bool
	stopErr error
}

type running struct {
	name   string
	cancel context.CancelFunc
	done   chan error // receives Run's outcome once
}

// New returns an empty group that logs how long each unit took to stop on
// log (nil: nowhere).
func New(log *slog.Logger) *Group {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Group{log: log, failed: make(chan struct{})}
}

// Start starts units in order, each with a context of its own that carries
// ctx's values but not its end: Stop ends them one by one. Once the group
// has stopped it starts none and returns ErrStopped.
func (g *Group) Start(ctx context.Context, units ...Unit) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return ErrStopped
	}
	for _, u := range units {
		uctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r := &running{name: u.Name, cancel: cancel, done: make(chan error, 1)}
		go func() {
			err := u.Run(uctx)
			if uctx.Err() != nil && errors.Is(err, context.Canceled) {
				err = nil // stopped while starting: not a failure
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", u.Name, err)
				g.fail.Do(func() { close(g.failed) })
			}
			r.done <- err
		}()
		g.units = append(g.units, r)
	}
	return nil
}

// Failed is closed once a unit has ended with an error; Stop returns it.
func (g *Group) Failed() <-chan struct{} { return g.failed }

// Stop ends the units, last started first, waiting for each to return
// before it ends the next, logs how long each took, and returns their
// errors. Later calls return the same errors once the first has.
func (g *Group) Stop() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return g.stopErr
	}
	g.stopped = true
	var errs []error
	for i := len(g.units) - 1; i >= 0; i-- {
		r := g.units[i]
		began := time.Now()
		r.cancel()
		errs = append(errs, <-r.done)
		g.log.Info("stopped", "part", r.name, "took", time.Since(began).Round(time.Millisecond))
	}
	g.units = nil
	g.stopErr = errors.Join(errs...)
	return g.stopErr
}
