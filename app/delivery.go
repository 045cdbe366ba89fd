package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/heraldhq/herald/channels"
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
}

// startNATS starts the embedded server or connects to the configured cluster.
func startNATS(cfg Config) (*worker.NATS, error) {
	if cfg.NATS.URL != "" {
		return worker.Connect(worker.ExternalConfig{URL: cfg.NATS.URL, CredsFile: cfg.NATS.CredsFile,
			CAFile: cfg.NATS.CAFile, CertFile: cfg.NATS.CertFile, KeyFile: cfg.NATS.KeyFile})
	}
	return worker.StartEmbedded(filepath.Join(cfg.Data, "nats"), worker.EmbeddedConfig{Listen: cfg.NATS.Listen})
}

// senders builds one sender per channel kind from its section, and returns
// what closes them.
func senders(cfg Config, log *slog.Logger, now func() time.Time) ([]channels.Sender, func() error, error) {
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
		env := channels.Env{Logger: log.With("kind", string(d.Kind)), Data: cfg.Data, SendTimeout: cfg.Delivery.SendTimeout, Now: now}
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
	w.Kinds = make(map[channels.Kind]worker.KindConfig, len(Kinds.All()))
	for _, k := range Kinds.All() {
		l := cfg.Section(k).SendLimits()
		w.Kinds[k.Kind] = worker.KindConfig{Concurrency: l.Concurrency, Rate: l.Rate}
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
