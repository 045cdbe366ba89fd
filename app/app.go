package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/net/netutil"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/maintenance"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/console"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/internal/httpguard"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/replica"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/worker"
)

// Options are the parts of a process that are not configuration.
type Options struct {
	// Clock is the time the process runs on. Default: the real clock.
	Clock clock.Clock
	// Logger is the process log. Default: built from Config.Log, written to Stderr.
	Logger *slog.Logger
	// Stdout receives the start-up lines a person reads (where it listens, how to
	// log in). Default os.Stdout.
	Stdout io.Writer
	// Stderr receives the log when Logger is nil. Default os.Stderr.
	Stderr io.Writer
	// Getenv reads the environment (HERALD_ADMIN_PASSWORD). Default os.Getenv.
	Getenv func(string) string
	// Demo asks for the demo setup on first start.
	Demo bool
	// Executable is the herald program, which runs the replicator (its
	// replicate command) for a control process with a replica. Default: this
	// process's own executable.
	Executable string
}

// App is one running Herald process.
type App struct {
	cfg    Config
	opt    Options
	log    *slog.Logger
	store  *store.Store
	api    *api.Server
	root   http.Handler // the API under /svc/ and the console under /console/
	md     *analytics.Service
	exec   *xtab.Executor
	export *export.Service
	tasks  *task.Pool
	maint  *maintenance.Service
	engine *engine.Engine
	// paced is the clock of the parts other than the engine: the time of
	// opt.Clock, and real waits for what paces work (sweeps, retries, leases,
	// polls), so that a test's clock holds the schedule still, not delivery.
	paced  clock.Clock
	notify *notify.Service
	nats   *worker.NATS
	relay  *worker.Relay  // nil in a worker-only process
	worker *worker.Worker // nil without the worker role
	ln     net.Listener
	opsLn  net.Listener         // nil when metrics.listen is empty
	reg    *prometheus.Registry // every part's metrics
	// fresh is set when the data folder had no database: the first start.
	fresh bool
	// The control role on a shared NATS cluster: its lease (nil on an
	// embedded server), and with a replica the replicator, the snapshots of
	// the warehouses and keys, and what the start restored (nil: nothing).
	lease    *replica.Lease
	repl     *replicatorRunner
	snaps    *replica.Snapshots
	restored *restoredState
	// opened is set once New has opened every part: before, /readyz checks
	// what is there (the lease a standby process waits for).
	opened  atomic.Bool
	stopOps func()       // stops the operator's listener once it serves
	sock    net.Listener // herald backup's socket; nil in a worker-only process
	// closers release what New opened, last first.
	closers []func() error
}

// close releases what New opened, in reverse order.
func (a *App) close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// New opens the data folder, applies migrations, bootstraps a new folder and
// binds the listener. Run serves; Close releases what New opened.
func New(ctx context.Context, cfg Config, opt Options) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	opt.Clock = clock.Or(opt.Clock)
	if opt.Stdout == nil {
		opt.Stdout = os.Stdout
	}
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	a := &App{cfg: cfg, opt: opt, log: opt.Logger, paced: clock.NowFrom(opt.Clock.Now)}
	if a.log == nil {
		a.log = newLogger(cfg.Log, opt.Stderr)
	}
	privateFiles()
	cfg.Runtime.Apply(opt.Getenv)
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	// A folder made beforehand (by a container image, say) may let others in.
	if err := os.Chmod(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	unlock, err := lockFolder(cfg.Data)
	if err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	a.closers = append(a.closers, unlock)
	a.reg = newRegistry()
	if a.nats, err = startNATS(cfg, a.log); err != nil {
		return nil, errors.Join(err, a.close())
	}
	a.closers = append(a.closers, func() error { a.nats.Close(); return nil })
	if cfg.control() {
		if err := a.openStore(ctx); err != nil {
			return nil, errors.Join(err, a.close())
		}
	}
	if err := a.open(ctx); err != nil {
		return nil, errors.Join(err, a.close())
	}
	a.opened.Store(true)
	return a, nil
}

// openStore opens the control process's store: on a shared NATS cluster once
// it holds the control lease (restoring an empty data folder from the
// replica first), fenced by the lease from then on.
func (a *App) openStore(ctx context.Context) error {
	if err := a.takeControl(ctx); err != nil {
		return err
	}
	_, statErr := os.Stat(filepath.Join(a.cfg.Data, "herald.db"))
	a.fresh = errors.Is(statErr, os.ErrNotExist)
	st, err := store.Open(ctx, filepath.Join(a.cfg.Data, "herald.db"))
	if err != nil {
		return err
	}
	a.store = st
	a.closers = append(a.closers, st.Close)
	if a.lease != nil {
		// From here, no commit of this process outlives its lease.
		st.Fence(a.lease.Check)
	}
	if err := a.restoreWarehouses(ctx); err != nil {
		return err
	}
	a.removeEngineCredentials()
	return nil
}

// open builds the parts of the process for its roles: the delivery parts
// every process has, then, in the control process, the rest over the store.
func (a *App) open(ctx context.Context) error {
	cfg, opt := a.cfg, a.opt
	d, err := a.openDelivery(ctx)
	if err != nil {
		return err
	}
	if !cfg.control() {
		if a.worker, err = a.newWorker(ctx, d, nil); err != nil {
			return err
		}
		a.reg.MustRegister(newStateCollector(a))
		return a.listenOps()
	}
	if err := a.bootstrap(ctx); err != nil {
		return err
	}
	box, key, err := openSecrets(cfg)
	if err != nil {
		return err
	}
	st := a.store
	settings := make(map[channels.Kind]channels.Settings, len(Kinds.All()))
	for _, d := range Kinds.All() {
		settings[d.Kind] = cfg.Section(d)
	}
	a.notify = notify.New(st, cfg.Subs, notify.Options{Domain: cfg.Domain, Kinds: Kinds, Settings: settings, Box: box, Clock: a.paced,
		PublicURL: cfg.PublicURL, LinkKey: secret.Derive(key, "links"), Logger: a.log.With("component", "notify"),
		Tester: newTester(d.senders, cfg.Delivery.SendTimeout), VerifyRecipients: cfg.Delivery.VerifyRecipients,
		TrustedDomains: cfg.Delivery.TrustedDomains, Bursts: burstReports{a}, Dates: dateAttributes{a}})
	if n, err := a.notify.RecheckRecipients(ctx); err != nil {
		return fmt.Errorf("recipients: %w", err)
	} else if n > 0 {
		a.log.Info("channels whose recipients must confirm changed with the configuration", "channels", n,
			"verifyRecipients", cfg.Delivery.VerifyRecipients)
	}
	if cfg.PublicURL == "" {
		a.log.Info("publicURL is not set: messages carry no unsubscribe link (and mails no List-Unsubscribe header) and no download links")
	}
	a.relay, err = worker.NewRelay(st, a.nats.JetStream(), d.files, box, d.key, d.cfg,
		worker.Options{Logger: a.log.With("component", "relay"), Clock: a.paced, Registerer: a.reg,
			Recorded: a.notify.WakeHealth})
	if err != nil {
		return err
	}
	if err := a.replayResults(ctx); err != nil {
		return err
	}
	if cfg.has(RoleWorker) {
		recorded := func(ids []string) {
			a.notify.WakeHealth()
			a.relay.Settled(ids...)
		}
		if a.worker, err = a.newWorker(ctx, d, recorded); err != nil {
			return err
		}
	}
	if err := a.openAnalytics(ctx); err != nil {
		return err
	}
	ecfg := cfg.Engine
	ecfg.Domain, ecfg.FilesDir, ecfg.Clock, ecfg.Registerer, ecfg.Exclusive = a.notify, runFiles(cfg), opt.Clock, a.reg, true
	a.engine, err = engine.New(st, analyticsPort{md: a.md, exec: a.exec, export: a.export}, ecfg,
		a.log.With("component", "engine"), a.relay.Notify)
	if err != nil {
		return err
	}
	a.notify.Connect(a.engine, a.relay.Notify, relayCallOff{a.relay})
	if err := a.openAPI(key); err != nil {
		return err
	}
	if opt.Demo && a.fresh {
		if err := a.setupDemo(ctx); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if a.ln, err = a.listen(); err != nil {
		return err
	}
	if err := a.startSnapshots(ctx); err != nil {
		return err
	}
	if err := a.listenBackups(); err != nil {
		return err
	}
	a.reg.MustRegister(newStateCollector(a))
	return a.listenOps()
}

// listen binds the API's listener: at most http.maxConnections at once and
// http.maxConnectionsPerClient from one client, TLS when a certificate is
// configured, and the framing of every connection's
// requests followed as they are read (httpguard.Framing), which needs the
// plain bytes, so TLS is ended here rather than by the http.Server, and
// connections speak HTTP/1.1.
func (a *App) listen() (net.Listener, error) {
	cfg := a.cfg.HTTP
	var tlsCfg *tls.Config
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("http.tlsCert: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln = netutil.LimitListener(ln, cfg.MaxConnections)
	refused := promauto.With(a.reg).NewCounter(prometheus.CounterOpts{
		Name: "herald_http_connections_refused_total",
		Help: "Connections closed as soon as they were accepted: their client address held http.maxConnectionsPerClient.",
	})
	ln = httpguard.LimitPerClient(ln, cfg.MaxConnectionsPerClient, prefixes(cfg.TrustedProxies), refused.Inc)
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	return httpguard.Framing(ln), nil
}

// openAnalytics opens the analytics warehouse, the report executor and
// exporter and the maintenance tasks over the store: what the API serves and
// the engine evaluates through.
func (a *App) openAnalytics(ctx context.Context) error {
	cfg, st := a.cfg, a.store
	var err error
	a.md, err = analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(cfg.Data, "warehouse"), Clock: a.paced,
		Warehouse: warehouse.Options{MemoryLimit: cfg.Warehouse.MemoryLimit, Threads: cfg.Warehouse.Threads}})
	if err != nil {
		return err
	}
	a.closers = append(a.closers, a.md.Close)
	xcfg := cfg.Execution
	xcfg.Dir, xcfg.Clock = filepath.Join(cfg.Data, "results"), a.paced
	a.exec = xtab.New(st, a.md, xcfg, a.log.With("component", "xtab"))
	a.export = export.New(st, a.exec, export.Config{Dir: filepath.Join(cfg.Data, "exports"), Workers: cfg.Export.Workers,
		Retention: cfg.Export.Retention, HTMLRows: cfg.Export.HTMLRows, Clock: a.paced, Registerer: a.reg}, a.log.With("component", "exporter"))
	return a.openMaintenance(ctx)
}

// openAPI opens the API and the console over what openAnalytics opened; key
// is the secret the console's and other keys derive from.
func (a *App) openAPI(key []byte) error {
	cfg, st := a.cfg, a.store
	a.api = api.New(st, api.Options{
		Domain: cfg.Domain, Clock: a.paced, Logger: a.log,
		Auth: cfg.Auth, TrustedProxies: prefixes(cfg.HTTP.TrustedProxies),
		LongTimeout:  cfg.HTTP.LongTimeout,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, SecureCookies: cfg.HTTP.TLSCert != "",
		Notify: a.notify, Previewer: a.engine,
		Analytics: a.md, MaxLoadBytes: cfg.HTTP.MaxLoadBytes,
		Executor: a.exec, Exporter: a.export,
		Maintenance: a.maint,
		Registerer:  a.reg, AccessLog: accessLog(cfg.Log),
	})
	con, err := console.New(console.Options{API: a.api, Kinds: Kinds, Key: secret.Derive(key, "console"),
		Secure: cfg.HTTP.TLSCert != "", Clock: a.paced, Logger: a.log.With("component", "console")})
	if err != nil {
		return err
	}
	root := http.NewServeMux()
	root.Handle(console.Prefix, con)
	root.Handle("/", a.api)
	a.root = root
	return nil
}

// URL is the base address the API is served at.
func (a *App) URL() string {
	scheme := "http"
	if a.cfg.HTTP.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + a.ln.Addr().String()
}

// Handler is the service's HTTP handler: the API and the console.
func (a *App) Handler() http.Handler { return a.root }

// Store is the process's store.
func (a *App) Store() *store.Store { return a.store }

// Run serves the API and runs the background parts until ctx ends, then
// shuts down in order: the engine stops firing (runs in flight finish), the
// worker settles the sends in flight, the server lets requests in flight
// finish, and what New opened is closed.
func (a *App) Run(ctx context.Context) error {
	if a.api == nil {
		return a.runWorker(ctx)
	}
	fresh := &freshConns{m: make(map[net.Conn]bool)}
	srv := &http.Server{
		// Requests framed two ways are refused here, before the API and the
		// console; every request reaches this handler, "OPTIONS *" too, so
		// that the framer and the server count the requests alike.
		Handler:                      httpguard.RefuseAmbiguous(a.root, a.log),
		ConnContext:                  httpguard.ConnContext,
		DisableGeneralOptionsHandler: true,
		ReadHeaderTimeout:            a.cfg.HTTP.ReadHeaderTimeout,
		ReadTimeout:                  a.cfg.HTTP.ReadTimeout,
		WriteTimeout:                 a.cfg.HTTP.WriteTimeout,
		IdleTimeout:                  a.cfg.HTTP.IdleTimeout,
		ErrorLog:                     slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		ConnState:                    fresh.track,
	}
	fmt.Fprintf(a.opt.Stdout, "Herald is listening on %s (data in %s)\n", a.URL(), a.cfg.Data)
	fmt.Fprintf(a.opt.Stdout, "Console: %s%s\n", a.URL(), console.Prefix)
	fmt.Fprintf(a.opt.Stdout, "Log in: curl -c cookies -H 'Content-Type: application/json' "+
		"-d '{\"postUserLogin\":{\"login\":\"%s\",\"password\":\"...\",\"remember\":0}}' %s/svc/account/login\n",
		a.cfg.AdminLogin, a.URL())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(a.ln) }()
	go a.pruneLoop(ctx)
	stopOps := a.serveOps()
	stopBackups := a.serveBackups()

	// Background parts, stopped in the reverse order: the engine executes
	// and exports through the executor and the exporter and hands over to
	// the relay, so it stops first.
	parts := a.replicaParts()
	parts = append(parts,
		part{"executor", a.exec.Run},
		part{"exporter", a.export.Run},
		part{"relay", a.relay.Run},
	)
	if a.worker != nil {
		parts = append(parts, part{"worker", a.worker.Run})
	}
	bg := startAll(ctx, append(parts,
		part{"tasks", a.tasks.Run},
		part{"maintenance", a.maint.Run},
		part{"health", a.notify.RunHealth},
		part{"engine", a.engine.Run},
	))
	var runErr error
	select {
	case err := <-errc:
		runErr = fmt.Errorf("serve: %w", err)
		errc <- nil
	case <-bg.failed: // stop reports its error
	case <-a.leaseLost():
		runErr = a.loseControl()
	case <-ctx.Done():
	}
	a.log.Info("stopping: the engine, then the background parts, then the API; a second signal ends the process at once")
	err := bg.stop(a.log)
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.HTTP.ShutdownTimeout)
	defer cancel()
	// Shutdown waits 5 s for connections that never sent a request; they
	// carry nothing, so close them now.
	srv.SetKeepAlivesEnabled(false)
	fresh.closeAll()
	if shutErr := srv.Shutdown(shutCtx); shutErr != nil {
		a.log.Warn("requests in flight cut short", "after", a.cfg.HTTP.ShutdownTimeout, "err", shutErr)
		err = errors.Join(err, shutErr)
	}
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	stopBackups()
	// The operator's listener goes last, so that a scrape sees the stop through.
	stopOps()
	return errors.Join(runErr, err, a.close())
}

// runWorker runs a worker-only process until ctx ends: its senders, and the
// operator's listener.
func (a *App) runWorker(ctx context.Context) error {
	fmt.Fprintf(a.opt.Stdout, "Herald worker is sending for %s (scratch in %s)\n", a.cfg.NATS.URL, a.cfg.Data)
	stopOps := a.serveOps()
	bg := startAll(ctx, []part{{"worker", a.worker.Run}})
	select {
	case <-bg.failed:
	case <-ctx.Done():
	}
	a.log.Info("stopping: the sends in flight finish; a second signal ends the process at once")
	err := bg.stop(a.log)
	stopOps()
	return errors.Join(err, a.close())
}

// serveOps serves the operator's listener, if there is one and it does not
// serve yet, until the returned func is called.
func (a *App) serveOps() (stop func()) {
	if a.stopOps != nil {
		return a.stopOps
	}
	if a.opsLn == nil {
		return func() {}
	}
	ops := a.opsServer()
	done := make(chan struct{})
	fmt.Fprintf(a.opt.Stdout, "Metrics, health and readiness at %s/metrics, /healthz, /readyz\n", a.OpsURL())
	go func() {
		defer close(done)
		if err := ops.Serve(a.opsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Warn("metrics listener", "err", err)
		}
	}()
	var once sync.Once
	a.stopOps = func() {
		once.Do(func() {
			_ = ops.Close()
			<-done
		})
	}
	a.closers = append(a.closers, func() error { a.stopOps(); return nil })
	return a.stopOps
}

// freshConns tracks the server's connections that have not sent a request yet.
type freshConns struct {
	mu sync.Mutex
	m  map[net.Conn]bool
}

func (f *freshConns) track(c net.Conn, state http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if state == http.StateNew {
		f.m[c] = true
	} else {
		delete(f.m, c)
	}
}

func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.m {
		_ = c.Close()
	}
}

// part is a background part of the process.
type part struct {
	name string
	run  func(context.Context) error
}

// running is a set of started parts.
type running struct {
	failed chan struct{} // receives when a part ends with an error
	stops  []func() error
	names  []string
}

// startAll starts each part with a context of its own, so stop can end them
// one by one, last first.
func startAll(ctx context.Context, parts []part) *running {
	r := &running{failed: make(chan struct{}, len(parts))}
	for _, p := range parts {
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan error, 1)
		go func() {
			err := p.run(pctx)
			if pctx.Err() != nil && errors.Is(err, context.Canceled) {
				err = nil // stopped while starting: not a failure
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", p.name, err)
				r.failed <- struct{}{}
			}
			done <- err
		}()
		r.stops = append(r.stops, func() error { cancel(); return <-done })
		r.names = append(r.names, p.name)
	}
	return r
}

// stop ends the parts, last started first, logs how long each took and returns their errors.
func (r *running) stop(log *slog.Logger) error {
	var errs []error
	for i := len(r.stops) - 1; i >= 0; i-- {
		began := time.Now()
		err := r.stops[i]()
		log.Info("stopped", "part", r.names[i], "took", time.Since(began).Round(time.Millisecond))
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pruneLoop deletes expired tokens and sessions now and then.
func (a *App) pruneLoop(ctx context.Context) {
	t := a.paced.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := a.store.PruneTokens(ctx, a.opt.Clock.Now()); err != nil && ctx.Err() == nil {
				a.log.Warn("prune tokens", "err", err)
			}
		}
	}
}

// bootstrap creates the default domain and its admin on first start. The
// admin password comes from HERALD_ADMIN_PASSWORD or is generated and printed once.
func (a *App) bootstrap(ctx context.Context) error {
	now := a.opt.Clock.Now()
	if err := a.store.EnsureDomain(ctx, a.cfg.Domain, now); err != nil {
		return err
	}
	n, err := a.store.CountUsers(ctx)
	if err != nil || n > 0 {
		return err
	}
	password := a.opt.Getenv("HERALD_ADMIN_PASSWORD")
	generated := password == ""
	if generated {
		password = rand.Text()
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), a.cfg.Auth.PasswordCost)
	if err != nil {
		return fmt.Errorf("hash admin password: %w", err)
	}
	admin := store.User{
		ID: store.NewID(32), Domain: a.cfg.Domain, Login: a.cfg.AdminLogin, PasswordHash: string(hash),
		FirstName: "Herald", LastName: "Admin", IsDomainAdmin: true, Created: now, Updated: now,
	}
	if err := a.store.CreateUser(ctx, admin); err != nil {
		return fmt.Errorf("create admin: %w", err)
	}
	if generated {
		fmt.Fprintf(a.opt.Stdout, "Created the domain admin %s with password %s (shown once; set HERALD_ADMIN_PASSWORD to choose it)\n",
			admin.Login, password)
	} else {
		fmt.Fprintf(a.opt.Stdout, "Created the domain admin %s with the password from HERALD_ADMIN_PASSWORD\n", admin.Login)
	}
	return nil
}

// openSecrets returns the box sealing channel passwords, with the configured
// key or the one kept in the data folder, and that key.
func openSecrets(cfg Config) (*secret.Box, []byte, error) {
	var key []byte
	var err error
	if cfg.Secrets.Key != "" {
		key, err = secret.ParseKey(cfg.Secrets.Key)
	} else {
		key, err = secret.LoadOrCreateKey(filepath.Join(cfg.Data, "secret.key"))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("secrets: %w", err)
	}
	box, err := secret.New(key)
	return box, key, err
}

// prefixes parses networks that Config.Validate has checked.
func prefixes(cidrs []string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// accessLog turns the log configuration into the API's access-log policy.
func accessLog(c LogConfig) *api.AccessLog {
	al := &api.AccessLog{Off: c.Access == "off", Sample: c.AccessSample}
	_ = al.Level.UnmarshalText([]byte(c.Access)) // validated by Config.Validate; "off" leaves Info
	return al
}

func newLogger(c LogConfig, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // validated by Config.Validate
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// relayCallOff calls off deliveries through the relay, for the domain.
type relayCallOff struct{ r *worker.Relay }

func (c relayCallOff) CallOff(ctx context.Context, sub, ch, reason string) error {
	return c.r.CallOff(ctx, worker.CallOff{Subscription: sub, Channel: ch, Reason: reason})
}
