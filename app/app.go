package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

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
	"github.com/heraldhq/herald/internal/httpserve"
	"github.com/heraldhq/herald/internal/logging"
	"github.com/heraldhq/herald/internal/startstop"
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
	opened atomic.Bool
	// units are the process's long-lived parts, started by Run (the
	// operator's listener by New already when it waits for the lease) and
	// stopped by it last first.
	units *startstop.Group
	opsUp bool         // the operator's listener serves
	sock  net.Listener // herald backup's socket; nil in a worker-only process
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
		a.log = logging.New(cfg.Log, opt.Stderr)
	}
	a.units = startstop.New(a.log)
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
		TrustedDomains: cfg.Delivery.TrustedDomains, Bursts: burstReports{a}, Dates: dateAttributes{a},
		Scheduler: engineScheduler{a}, HandedOver: a.handedOver, Deliveries: relayCallOff{a}})
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
	if err := a.openAPI(key); err != nil {
		return err
	}
	if opt.Demo && a.fresh {
		if err := a.setupDemo(ctx); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if a.ln, err = httpserve.Listen(cfg.Listen, cfg.HTTP, a.reg); err != nil {
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

// openAnalytics opens the analytics warehouse, the report executor and
// exporter and the maintenance tasks over the store: what the API serves and
// the engine evaluates through.
func (a *App) openAnalytics(ctx context.Context) error {
	cfg, st := a.cfg, a.store
	var err error
	a.md, err = analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(cfg.Data, "warehouse"), Clock: a.paced,
		Warehouse: warehouse.Options{Config: cfg.Warehouse}})
	if err != nil {
		return err
	}
	a.closers = append(a.closers, a.md.Close)
	xcfg := cfg.Execution
	xcfg.Dir, xcfg.Clock = filepath.Join(cfg.Data, "results"), a.paced
	a.exec = xtab.New(st, a.md, xcfg, a.log.With("component", "xtab"))
	a.export = export.New(st, a.exec, export.Options{Config: cfg.Export, Dir: filepath.Join(cfg.Data, "exports"),
		Clock: a.paced, Registerer: a.reg}, a.log.With("component", "exporter"))
	return a.openMaintenance(ctx)
}

// openAPI opens the API and the console over what openAnalytics opened; key
// is the secret the console's and other keys derive from.
func (a *App) openAPI(key []byte) error {
	cfg, st := a.cfg, a.store
	access := cfg.Log.AccessLog()
	a.api = api.New(st, api.Options{
		Domain: cfg.Domain, Clock: a.paced, Logger: a.log,
		Auth: cfg.Auth, TrustedProxies: cfg.HTTP.Proxies(),
		LongTimeout:  cfg.HTTP.LongTimeout,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, SecureCookies: cfg.HTTP.TLSCert != "",
		Notify: a.notify, Previewer: a.engine,
		Analytics: a.md, MaxLoadBytes: cfg.HTTP.MaxLoadBytes,
		Executor: a.exec, Exporter: a.export,
		Maintenance: a.maint,
		Registerer:  a.reg, AccessLog: &access,
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
	srv := httpserve.New(a.cfg.HTTP, a.root, a.log)
	fmt.Fprintf(a.opt.Stdout, "Herald is listening on %s (data in %s)\n", a.URL(), a.cfg.Data)
	fmt.Fprintf(a.opt.Stdout, "Console: %s%s\n", a.URL(), console.Prefix)
	fmt.Fprintf(a.opt.Stdout, "Log in: curl -c cookies -H 'Content-Type: application/json' "+
		"-d '{\"postUserLogin\":{\"login\":\"%s\",\"password\":\"...\",\"remember\":0}}' %s/svc/account/login\n",
		a.cfg.AdminLogin, a.URL())
	a.serveOps(ctx)
	var runErr error
	if err := a.units.Start(ctx, a.controlUnits(srv)...); err != nil {
		runErr = err
	} else {
		select {
		case <-a.units.Failed(): // Stop reports the error
		case <-a.leaseLost():
			runErr = a.loseControl()
		case <-ctx.Done():
		}
	}
	a.log.Info("stopping: the engine, then the background parts, then the API; a second signal ends the process at once")
	return errors.Join(runErr, a.units.Stop(), a.close())
}

// runWorker runs a worker-only process until ctx ends: its senders, and the
// operator's listener.
func (a *App) runWorker(ctx context.Context) error {
	fmt.Fprintf(a.opt.Stdout, "Herald worker is sending for %s (scratch in %s)\n", a.cfg.NATS.URL, a.cfg.Data)
	a.serveOps(ctx)
	runErr := a.units.Start(ctx, startstop.Unit{Name: "worker", Run: a.worker.Run})
	if runErr == nil {
		select {
		case <-a.units.Failed():
		case <-ctx.Done():
		}
	}
	a.log.Info("stopping: the sends in flight finish; a second signal ends the process at once")
	return errors.Join(runErr, a.units.Stop(), a.close())
}

// serveOps starts serving the operator's listener, if there is one and it
// does not serve yet: the first unit, stopped last.
func (a *App) serveOps(ctx context.Context) {
	if a.opsLn == nil || a.opsUp {
		return
	}
	fmt.Fprintf(a.opt.Stdout, "Metrics, health and readiness at %s/metrics, /healthz, /readyz\n", a.OpsURL())
	ops := a.opsServer()
	unit := startstop.Unit{Name: "operator listener", Run: func(ctx context.Context) error {
		if err := serving(ctx, ops, a.opsLn, ops.Close); err != nil {
			a.log.Warn("metrics listener", "err", err)
		}
		return nil
	}}
	if a.units.Start(ctx, unit) == nil {
		a.opsUp = true
		// New may fail after this: close stops it then (Run has by then,
		// and has reported the units' errors).
		a.closers = append(a.closers, func() error { _ = a.units.Stop(); return nil })
	}
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

// The domain is built before the engine and the relay, which are built
// over it, and it tells them of what changes through these, given to it at
// construction, which find them in the App. Until New has built them (the
// domain's checks at start), its word reaches neither.

// engineScheduler is the engine, for the domain.
type engineScheduler struct{ a *App }

func (s engineScheduler) SubscriptionChanged(id string) {
	if s.a.engine != nil {
		s.a.engine.SubscriptionChanged(id)
	}
}

func (s engineScheduler) SendNow(ctx context.Context, sub store.Subscription, by string) (store.Run, error) {
	if s.a.engine == nil {
		return store.Run{}, errors.New("the engine is not running")
	}
	return s.a.engine.SendNow(ctx, sub, by)
}

// handedOver tells the relay that the outbox has rows, for the domain.
func (a *App) handedOver() {
	if a.relay != nil {
		a.relay.Notify()
	}
}

// relayCallOff calls off deliveries through the relay, for the domain.
type relayCallOff struct{ a *App }

func (c relayCallOff) CallOff(ctx context.Context, sub, ch, reason string) error {
	if c.a.relay == nil {
		return errors.New("the delivery relay is not running")
	}
	return c.a.relay.CallOff(ctx, worker.CallOff{Subscription: sub, Channel: ch, Reason: reason})
}
