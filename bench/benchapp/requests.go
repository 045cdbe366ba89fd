package benchapp

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
)

// Requests is a log handler that counts the requests the API answered 201
// on the routes it watches, by the route's suffix (such as
// "/svc/xtab2/executor3"). Start Herald with it as the logger and the log
// level at debug, where requests are logged.
type Requests map[string]*atomic.Int64

// NewRequests watches the given route suffixes.
func NewRequests(suffixes ...string) Requests {
	r := Requests{}
	for _, s := range suffixes {
		r[s] = new(atomic.Int64)
	}
	return r
}

// Count is how many requests to the route with this suffix were answered 201.
func (r Requests) Count(suffix string) int64 { return r[suffix].Load() }

// Reset sets every count back to zero.
func (r Requests) Reset() {
	for _, n := range r {
		n.Store(0)
	}
}

// Enabled implements slog.Handler.
func (Requests) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler: it counts the request records it watches.
func (r Requests) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "request" {
		return nil
	}
	var route string
	var status int64
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "route": // the mux pattern, "POST /svc/xtab2/executor3"
			route = a.Value.String()
		case "status":
			status = a.Value.Int64()
		}
		return true
	})
	if status != 201 {
		return nil
	}
	for suffix, n := range r {
		if strings.HasSuffix(route, suffix) {
			n.Add(1)
		}
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (r Requests) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup implements slog.Handler.
func (r Requests) WithGroup(string) slog.Handler { return r }
