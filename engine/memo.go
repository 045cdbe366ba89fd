package engine

import (
	"context"
	"sync"
	"time"
)

// metricMemo runs each (metric, instant) once, however many subscriptions ask
// for it, concurrently or one after another: callers of the same key share
// one execution and its result, which is kept until the instant is older
// than keep.
type metricMemo struct {
	mu      sync.Mutex
	calls   map[memoKey]*memoCall
	keep    time.Duration
	timeout time.Duration // of one shared execution
	metrics *metrics
}

type memoKey struct {
	metric string
	at     int64
}

type memoCall struct {
	done chan struct{}
	v    Value
	err  error
}

func newMetricMemo(keep, timeout time.Duration, m *metrics) *metricMemo {
	return &metricMemo{calls: make(map[memoKey]*memoCall), keep: keep, timeout: timeout, metrics: m}
}

// do returns the value of metric at instant at, calling exec only if no other
// caller has (or is doing so) for the same pair. A failed execution is not
// kept, so a later caller tries again.
func (m *metricMemo) do(ctx context.Context, metric string, at time.Time, exec func(context.Context) (Value, error)) (Value, error) {
	key := memoKey{metric, at.UnixNano()}
	m.mu.Lock()
	if c, ok := m.calls[key]; ok {
		m.mu.Unlock()
		m.metrics.cacheHits.Inc()
		select {
		case <-c.done:
			return c.v, c.err
		case <-ctx.Done():
			return Value{}, ctx.Err()
		}
	}
	c := &memoCall{done: make(chan struct{})}
	m.calls[key] = c
	m.pruneLocked(at)
	m.mu.Unlock()

	// The execution is shared: it must not end because the first caller's run
	// did, so it has a deadline of its own.
	execCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.timeout)
	m.metrics.executions.Inc()
	c.v, c.err = exec(execCtx)
	cancel()
	if c.err != nil {
		m.mu.Lock()
		delete(m.calls, key)
		m.mu.Unlock()
	}
	close(c.done)
	return c.v, c.err
}

// pruneLocked forgets results of instants more than keep before at.
func (m *metricMemo) pruneLocked(at time.Time) {
	if len(m.calls) < 1024 {
		return
	}
	limit := at.Add(-m.keep).UnixNano()
	for k, c := range m.calls {
		select {
		case <-c.done:
			if k.at < limit {
				delete(m.calls, k)
			}
		default:
		}
	}
}
