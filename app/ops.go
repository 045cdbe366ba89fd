package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsConfig configures the operator's listener: /metrics, /healthz and /readyz.
type MetricsConfig struct {
	// Listen is the host:port of the operator's listener; empty turns it off. It is
	// separate from the API so that it is never public by accident. Default 127.0.0.1:9180.
	Listen string `yaml:"listen"`
}

// newRegistry returns the registry every part of the process registers its metrics on,
// with the Go runtime and process collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// stateCollector reads, at each scrape, the readiness checks and the count of unhealthy
// subscriptions, so that alerts can be written on them.
type stateCollector struct {
	a         *App
	ready     *prometheus.Desc
	unhealthy *prometheus.Desc
	lease     *prometheus.Desc
	syncAge   *prometheus.Desc
}

func newStateCollector(a *App) *stateCollector {
	return &stateCollector{a: a,
		ready: prometheus.NewDesc("herald_readiness_ok",
			"1 when the readiness check passes, 0 when it fails (what /readyz answers), by check.", []string{"check"}, nil),
		unhealthy: prometheus.NewDesc("herald_engine_subscriptions_unhealthy",
			"Subscriptions that failed subscriptions.failuresBeforeNotice runs in a row and whose owners were told.", nil, nil),
		lease: prometheus.NewDesc("herald_control_lease_held",
			"1 while this control process holds the control lease of its NATS cluster (and may fire and write), else 0.", nil, nil),
		syncAge: prometheus.NewDesc("herald_replica_sync_age_seconds",
			"Seconds since the replica last took what the database had: the recovery point now.", nil, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.ready
	ch <- c.unhealthy
	ch <- c.lease
	ch <- c.syncAge
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	for name, err := range c.a.runChecks(ctx) {
		v := 1.0
		if err != nil {
			v = 0
		}
		ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, v, name)
	}
	if c.a.lease != nil {
		held := 0.0
		if c.a.lease.Check() == nil {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(c.lease, prometheus.GaugeValue, held)
	}
	if c.a.repl != nil {
		if r := c.a.repl.current(); r != nil && !r.Synced().IsZero() {
			ch <- prometheus.MustNewConstMetric(c.syncAge, prometheus.GaugeValue, time.Since(r.Synced()).Seconds())
		}
	}
	if c.a.store == nil {
		return
	}
	if n, err := c.a.store.CountUnhealthy(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.unhealthy, prometheus.GaugeValue, float64(n))
	}
}

// check is one condition of readiness.
type check struct {
	name string
	run  func(ctx context.Context) error
}

// checkTimeout bounds each readiness check.
const checkTimeout = 2 * time.Second

// checks are what /readyz asks before it answers 200.
func (a *App) checks() []check {
	nats := check{"nats", func(context.Context) error { return a.nats.Check() }}
	data := check{"data", func(context.Context) error { return writable(a.cfg.Data) }}
	var out []check
	switch {
	case !a.opened.Load():
		// Waiting for the control lease, or opening: what is there.
		out = []check{data, nats}
	case a.store == nil:
		out = []check{data, nats, {"stream", a.worker.Check}}
	default:
		out = []check{
			{"sqlite", a.store.Ping},
			data,
			nats,
			{"stream", a.relay.Check},
			{"scheduler", func(context.Context) error {
				if !a.engine.Loaded() {
					return errors.New("subscriptions not loaded yet")
				}
				return nil
			}},
			{"warehouse", func(context.Context) error { return writable(filepath.Join(a.cfg.Data, "warehouse")) }},
		}
	}
	if a.worker != nil && a.opened.Load() {
		out = append(out, check{"providers", a.worker.CheckProviders})
	}
	if a.lease != nil {
		out = append(out, check{"lease", func(context.Context) error { return a.lease.Check() }})
	}
	if a.repl != nil && a.opened.Load() {
		out = append(out, check{"replica", a.repl.check})
	}
	return out
}

// writable checks that dir's disk takes a write: a 4 KiB file created,
// written, synced and removed. An empty file can be made on a full disk.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".ready-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_, err = f.Write(make([]byte, 4<<10))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close(), os.Remove(name))
}

// readiness is the body of /readyz: each check with "ok" or what failed.
type readiness struct {
	Ready  bool              `json:"ready"`
	Checks map[string]string `json:"checks"`
}

// runChecks runs every readiness check, each within checkTimeout, and returns what each said.
func (a *App) runChecks(ctx context.Context) map[string]error {
	out := make(map[string]error)
	for _, c := range a.checks() {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		out[c.name] = c.run(cctx)
		cancel()
	}
	return out
}

func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	res := readiness{Ready: true, Checks: make(map[string]string)}
	for name, err := range a.runChecks(r.Context()) {
		res.Checks[name] = "ok"
		if err != nil {
			res.Ready, res.Checks[name] = false, err.Error()
		}
	}
	status := http.StatusOK
	if !res.Ready {
		status = http.StatusServiceUnavailable
		a.log.Warn("not ready", "checks", res.Checks)
	}
	writeJSON(w, status, res)
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// opsServer serves /metrics, /healthz and /readyz on the operator's listener.
func (a *App) opsServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn), Registry: a.reg, Timeout: 10 * time.Second,
	}))
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// OpsURL is the base address of /metrics, /healthz and /readyz, or "" when they are off.
func (a *App) OpsURL() string {
	if a.opsLn == nil {
		return ""
	}
	return "http://" + a.opsLn.Addr().String()
}

// listenOps binds the operator's listener when one is configured and it is
// not bound yet.
func (a *App) listenOps() error {
	if a.cfg.Metrics.Listen == "" || a.opsLn != nil {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.Metrics.Listen)
	if err != nil {
		return fmt.Errorf("metrics listen: %w", err)
	}
	a.opsLn = ln
	a.closers = append(a.closers, func() error {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
	return nil
}
