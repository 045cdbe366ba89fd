package app

import (
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

// DeliveryConfig tunes retries and throughput.
type DeliveryConfig struct {
	// MaxAttempts is how many sends of one delivery are tried. Default 10.
	MaxAttempts int `yaml:"maxAttempts"`
	// BackoffBase and BackoffCap bound the retry delay: it doubles from the
	// base with every attempt up to the cap, with full jitter. Defaults 5s and 30m.
	BackoffBase time.Duration `yaml:"backoffBase"`
	BackoffCap  time.Duration `yaml:"backoffCap"`
	// SendTimeout bounds one send. Default 30s.
	SendTimeout time.Duration `yaml:"sendTimeout"`
	// AckWait is how long JetStream waits before it hands out again a delivery a
	// process took and stopped telling about (it died). Default 5s.
	AckWait time.Duration `yaml:"ackWait"`
	// ProbeInterval and ProbeIntervalMax pace the probes of a provider that cannot be
	// reached, doubling from the first to the second. Defaults 1s and 5s.
	ProbeInterval    time.Duration `yaml:"probeInterval"`
	ProbeIntervalMax time.Duration `yaml:"probeIntervalMax"`
	// MaxWait is how long a delivery waits for an unreachable provider before it
	// fails. Default 24h.
	MaxWait time.Duration `yaml:"maxWait"`
	// ReconcileAfter is how long a delivery may stay pending without a change before
	// the stream is asked whether it still holds its message (and it is published
	// again if not); ReconcileInterval is how often that is looked at. Defaults 1m, 30s.
	ReconcileAfter    time.Duration `yaml:"reconcileAfter"`
	ReconcileInterval time.Duration `yaml:"reconcileInterval"`
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

// workerConfig maps the configuration onto the worker's.
func workerConfig(cfg Config) worker.Config {
	d := cfg.Delivery
	kinds := make(map[channels.Kind]worker.KindConfig, len(Kinds.All()))
	for _, k := range Kinds.All() {
		l := cfg.Section(k).SendLimits()
		kinds[k.Kind] = worker.KindConfig{Concurrency: l.Concurrency, Rate: l.Rate}
	}
	return worker.Config{
		MaxAttempts: d.MaxAttempts, BackoffBase: d.BackoffBase, BackoffCap: d.BackoffCap, SendTimeout: d.SendTimeout,
		AckWait: d.AckWait, ProbeInterval: d.ProbeInterval, ProbeIntervalMax: d.ProbeIntervalMax, MaxWait: d.MaxWait,
		ReconcileAfter: d.ReconcileAfter, ReconcileInterval: d.ReconcileInterval, Kinds: kinds,
	}
}
