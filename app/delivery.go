package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/worker"
)

// NATSConfig says where deliveries travel: an embedded server by default.
type NATSConfig struct {
	// URL of an external NATS cluster (comma-separated servers). Default
	// empty: an embedded server with its storage in <data>/nats.
	URL string `yaml:"url"`
	// CredsFile, CAFile, CertFile and KeyFile authenticate to an external cluster.
	CredsFile string `yaml:"credsFile"`
	CAFile    string `yaml:"caFile"`
	CertFile  string `yaml:"certFile"`
	KeyFile   string `yaml:"keyFile"`
	// Listen is where the embedded server accepts other processes (sender
	// nodes). Default empty: in-process only, no port.
	Listen string `yaml:"listen"`
	// Replicas is the replica count of every stream, key-value bucket and
	// object store Herald creates. Default 1.
	Replicas int `yaml:"replicas"`
}

// startNATS starts the embedded server or connects to the configured cluster.
func startNATS(cfg Config, log *slog.Logger) (*worker.NATS, error) {
	if cfg.NATS.URL != "" {
		return worker.Connect(worker.ExternalConfig{URL: cfg.NATS.URL, CredsFile: cfg.NATS.CredsFile,
			CAFile: cfg.NATS.CAFile, CertFile: cfg.NATS.CertFile, KeyFile: cfg.NATS.KeyFile, Logger: log})
	}
	return worker.StartEmbedded(filepath.Join(cfg.Data, "nats"), worker.EmbeddedConfig{Listen: cfg.NATS.Listen, Logger: log})
}

// senders builds one sender per channel kind from its section, and returns
// what closes them.
func senders(cfg Config, log *slog.Logger, c clock.Clock) ([]channels.Sender, func() error, error) {
	var out []channels.Sender
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	for _, d := range Kinds.All() {
		env := channels.Env{Logger: log.With("kind", string(d.Kind)), Data: cfg.Data, SendTimeout: cfg.Delivery.SendTimeout, Clock: c}
		s, closer, err := d.NewSender(cfg.Section(d), env)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("%s: %w", d.Section, err), closeAll())
		}
		out = append(out, s)
		if closer != nil {
			closers = append(closers, closer)
		}
	}
	return out, closeAll, nil
}

// workerConfig is the delivery section with each kind's limits from its own section.
func workerConfig(cfg Config) worker.Config {
	w := cfg.Delivery
	w.Replicas = cfg.NATS.Replicas
	w.Kinds = make(map[channels.Kind]worker.KindConfig, len(Kinds.All()))
	for _, k := range Kinds.All() {
		l := cfg.Section(k).SendLimits()
		w.Kinds[k.Kind] = worker.KindConfig{Concurrency: l.Concurrency, Rate: l.Rate, PerDestination: l.PerDestination,
			PerOwner: l.PerOwner}
	}
	return w
}

// tester sends the test messages of notify.Service.TestChannel through the
// worker's own senders, so that a test shares their pooled connections and
// clients. The worker keeps its per-kind concurrency and rate limits to itself,
// so a test is one send beside them, bounded as a worker send is by the send
// timeout.
type tester struct {
	byKind  map[channels.Kind]channels.Sender
	timeout time.Duration // bounds one send; 0: only ctx and the sender's own timeout
}

// newTester returns the tester over the worker's senders.
func newTester(sends []channels.Sender, timeout time.Duration) *tester {
	t := &tester{byKind: make(map[channels.Kind]channels.Sender, len(sends)), timeout: timeout}
	for _, s := range sends {
		t.byKind[s.Kind()] = s
	}
	return t
}

// Test sends m at once through the sender of its channel's kind.
func (t *tester) Test(ctx context.Context, m channels.Message) (string, error) {
	s, ok := t.byKind[m.Channel.Kind]
	if !ok {
		return "", channels.Permanent(fmt.Errorf("this process has no sender of kind %q", m.Channel.Kind))
	}
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	return s.Send(ctx, m)
}

// delivery is what every process needs to take part in delivery.
type delivery struct {
	cfg     worker.Config
	senders []channels.Sender
	files   *worker.Files // attachments: the run files, and the object store
	key     *secret.Box   // the delivery key
}

// openDelivery opens the delivery key, the attachments (the run files, and
// the object store where other processes fetch them) and the senders.
func (a *App) openDelivery(ctx context.Context) (delivery, error) {
	d := delivery{cfg: workerConfig(a.cfg)}
	var err error
	if d.key, err = deliveryKey(a.cfg); err != nil {
		return d, err
	}
	fc := worker.FilesConfig{Replicas: d.cfg.Replicas, TTL: d.cfg.Keep(), Scratch: filepath.Join(a.cfg.Data, "scratch"),
		Clock: a.paced, Logger: a.log.With("component", "delivery")}
	if a.cfg.control() {
		// The engine's run files are named by their content: the relay and a
		// worker of this process read them where they are. With an embedded
		// NATS server that no other process reaches, no worker elsewhere
		// fetches them, and they stay the one copy.
		fc.Local, fc.Private = runFiles(a.cfg), a.cfg.NATS.URL == "" && a.cfg.NATS.Listen == ""
	}
	d.files, err = worker.OpenFiles(ctx, a.nats.JetStream(), fc)
	if err != nil {
		return d, fmt.Errorf("delivery files: %w", err)
	}
	var closeSenders func() error
	d.senders, closeSenders, err = senders(a.cfg, a.log.With("component", "delivery"), a.paced)
	if err != nil {
		return d, err
	}
	a.closers = append(a.closers, closeSenders)
	return d, nil
}

// newWorker returns the senders' worker over the configured ledger; recorded
// is told of the deliveries the SQLite ledger makes final.
func (a *App) newWorker(ctx context.Context, d delivery, recorded func(ids []string)) (*worker.Worker, error) {
	var ledger worker.Ledger
	if d.cfg.Ledger == worker.LedgerSQLite {
		ledger = worker.NewSQLiteLedger(a.store, a.paced, recorded)
	} else {
		var err error
		ledger, err = worker.NewKVLedger(ctx, a.nats.JetStream(), worker.KVLedgerConfig{Results: d.cfg.ResultsStream,
			Replicas: d.cfg.Replicas, TTL: d.cfg.Keep(), Owner: rand.Text(), Lease: d.cfg.AckWait, Clock: a.paced,
			Logger: a.log.With("component", "ledger")})
		if err != nil {
			return nil, fmt.Errorf("delivery ledger: %w", err)
		}
	}
	return worker.New(a.nats.JetStream(), ledger, d.files, d.key, d.senders, d.cfg,
		worker.Options{Logger: a.log.With("component", "worker"), Registerer: a.reg})
}

// deliveryKey opens the delivery key file, creating <data>/delivery.key on
// the first start when no file is configured.
func deliveryKey(cfg Config) (*secret.Box, error) {
	path := cfg.Delivery.KeyFile
	if path == "" {
		path = filepath.Join(cfg.Data, "delivery.key")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if _, err := secret.LoadOrCreateKey(path); err != nil {
				return nil, fmt.Errorf("delivery key: %w", err)
			}
		}
	}
	keys, err := secret.ReadKeys(path)
	if err != nil {
		return nil, fmt.Errorf("delivery.keyFile: %w", err)
	}
	return secret.New(keys[0], keys[1:]...)
}
