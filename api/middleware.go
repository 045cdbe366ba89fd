package api

import (
	"context"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/internal/httpguard"
)

type ctxKey int

const requestIDKey ctxKey = iota

var requestSeq atomic.Uint64

// requestID returns the id of the request in ctx.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// withRequestID gives every request an id, echoes a client's id with the
// server's suffix appended, logs the request and turns panics into a 500.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		own := s.idPrefix + strconv.FormatUint(requestSeq.Add(1), 36)
		id := own
		// The platform's SDKs name theirs X-SVC-Request (X-GDC-Request on the platform).
		for _, h := range []string{"X-Request-Id", "X-SVC-Request", "X-GDC-Request"} {
			if v := r.Header.Get(h); v != "" && len(v) <= 128 {
				id = v + ":" + own
				break
			}
		}
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		sw := &statusWriter{ResponseWriter: w}
		if err := refuse(r); err != nil {
			// Before any work: no authentication, no body read.
			s.writeError(sw, r, err)
			s.observe(r.Context(), r, sw, id, time.Since(start))
			return
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.ErrorContext(r.Context(), "panic serving request", "requestId", httpguard.Clip(id), "path", httpguard.Clip(r.URL.Path),
					"panic", p, "stack", string(debug.Stack()))
				if sw.status == 0 {
					s.writeError(sw, r, newError(http.StatusInternalServerError, classInternal, "api", "Internal error"))
				}
			}
			s.observe(r.Context(), r, sw, id, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refuse answers, before any work, a request whose method the service does not
// know (501), and a state-changing request that a browser says another site
// sent (403).
func refuse(r *http.Request) error {
	if !httpguard.KnownMethod(r.Method) {
		return newError(http.StatusNotImplemented, classUser, "api", "The request's method is not one this service implements")
	}
	if httpguard.CrossSite(r) {
		return forbidden("api", "A request that another site sent (%s) may not change anything here", "Sec-Fetch-Site: cross-site")
	}
	return nil
}
