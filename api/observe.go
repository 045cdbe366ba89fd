package api

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/heraldhq/herald/internal/httpguard"
)

// httpMetrics are the API's Prometheus series.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	f := promauto.With(reg)
	return &httpMetrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
	}
}

// observe records a finished request in the metrics and the access log. The route is the
// pattern the request matched and the method one of the known ones or "other", so the
// series stay few whatever paths and methods clients send.
func (s *Server) observe(ctx context.Context, r *http.Request, sw *statusWriter, id string, took time.Duration) {
	route := r.Pattern
	if route == "" {
		route = "unmatched"
	}
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	method := httpguard.MethodLabel(r.Method)
	s.metrics.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	s.metrics.duration.WithLabelValues(route, method).Observe(took.Seconds())
	a := s.access
	level := a.Level
	switch {
	case a.Off:
		return
	case status >= 500 && method != httpguard.OtherMethod: // a method nobody implements is the client's fault
		level = slog.LevelWarn
	case status >= 400:
		level = max(level, slog.LevelInfo)
	case a.Sample < 1 && rand.Float64() >= a.Sample:
		return
	}
	s.log.Log(ctx, level, "request", "requestId", httpguard.Clip(id), "route", route, "method", method, "status", status,
		"bytes", sw.bytes, "duration", took)
}
