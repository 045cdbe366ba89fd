package app

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/heraldhq/herald/internal/httpserve"
	"github.com/heraldhq/herald/internal/startstop"
)

// server is an HTTP server: *http.Server or *httpserve.Server.
type server interface{ Serve(net.Listener) error }

// serving serves srv on ln until ctx ends or Serve fails, ends it with shut,
// and returns once Serve has returned: Serve's failure and shut's error.
func serving(ctx context.Context, srv server, ln net.Listener, shut func() error) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		// The listener failed: the connections it took end as at a stop.
		return errors.Join(err, shut())
	case <-ctx.Done():
	}
	err := shut()
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

// apiUnit serves the API and the console on the process's listener. At
// its stop, connections that never sent a request are closed at once (they
// carry nothing, and Shutdown would wait 5 s for them) and requests in
// flight have http.shutdownTimeout to finish.
func (a *App) apiUnit(srv *httpserve.Server) startstop.Unit {
	return startstop.Unit{Name: "api server", Run: func(ctx context.Context) error {
		return serving(ctx, srv, a.ln, func() error {
			shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.HTTP.ShutdownTimeout)
			defer cancel()
			if err := srv.Shutdown(shutCtx); err != nil {
				a.log.Warn("requests in flight cut short", "after", a.cfg.HTTP.ShutdownTimeout, "err", err)
				return err
			}
			return nil
		})
	}}
}

// controlUnits are the units of a control process, which Run starts in
// order and stops in the reverse order: the engine executes and exports
// through the executor and the exporter and hands over to the relay, so it
// stops first; the API lets requests in flight finish once the background
// parts have stopped. The operator's listener, started before them, goes
// last, so that a scrape sees the stop through.
func (a *App) controlUnits(srv *httpserve.Server) []startstop.Unit {
	units := []startstop.Unit{a.backupsUnit(), a.apiUnit(srv)}
	units = append(units, a.replicaParts()...)
	units = append(units,
		startstop.Unit{Name: "executor", Run: a.exec.Run},
		startstop.Unit{Name: "exporter", Run: a.export.Run},
		startstop.Unit{Name: "relay", Run: a.relay.Run},
	)
	if a.worker != nil {
		units = append(units, startstop.Unit{Name: "worker", Run: a.worker.Run})
	}
	units = append(units,
		startstop.Unit{Name: "tasks", Run: a.tasks.Run},
		startstop.Unit{Name: "maintenance", Run: a.maint.Run},
		startstop.Unit{Name: "health", Run: a.notify.RunHealth},
		startstop.Unit{Name: "token pruning", Run: func(ctx context.Context) error { a.pruneLoop(ctx); return nil }},
		startstop.Unit{Name: "engine", Run: a.engine.Run},
	)
	return units
}
