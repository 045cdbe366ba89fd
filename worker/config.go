package worker

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

// Config tunes delivery. The zero value of every field means its default.
type Config struct {
	// Stream is the JetStream stream that carries deliveries. Default
	// "HERALD_DELIVERIES".
	Stream string `yaml:"stream"`

	// DedupeWindow is how long JetStream remembers a delivery id it was
	// given, so that a delivery published again within the window (after a
	// crash between the publish and the outbox delete) is dropped. Default 10m.
	DedupeWindow time.Duration `yaml:"dedupeWindow"`

	// MaxAge is how long a delivery may wait in the stream for a sender of
	// its kind before JetStream drops it. Default 168h (7 days).
	MaxAge time.Duration `yaml:"maxAge"`

	// Ledger is where senders record what became of each delivery: "sqlite",
	// the control process's store, when the senders run in that process only;
	// "jetstream", a replicated key-value bucket whose outcomes flow back to the
	// control process over a results stream, when senders run in other
	// processes too. Default sqlite.
	Ledger string `yaml:"ledger"`

	// KeyFile holds the delivery key, which seals channel secrets inside
	// delivery messages: one key per line (32 bytes in base64), the newest
	// first; older keys still open what they sealed. The control process and
	// every worker read the same file. Default empty: <data>/delivery.key,
	// created on the first start of a process with the engine role.
	KeyFile string `yaml:"keyFile"`

	// ResultsStream is the JetStream stream that carries the outcomes senders
	// report with the jetstream ledger. Default "HERALD_RESULTS".
	ResultsStream string `yaml:"resultsStream"`

	// Replicas is the replica count of every stream, bucket and object store
	// of delivery; app sets it from nats.replicas. Default 1.
	Replicas int `yaml:"-"`

	// SendTimeout bounds one send to a provider, and with it how long a
	// stopping worker waits for the sends in flight. Default 30s.
	SendTimeout time.Duration `yaml:"sendTimeout"`

	// AckWait is how long JetStream waits for the outcome of a delivery it
	// handed out before it hands it out again. While this process holds a
	// message (waiting for a send slot, or sending) it tells JetStream so every
	// AckWait/3, so AckWait bounds only how long the messages of a process that
	// died wait to be handed out again. Default 5s.
	AckWait time.Duration `yaml:"ackWait"`

	// ProbeInterval and ProbeIntervalMax pace the probes of a provider that cannot be
	// reached: the first after ProbeInterval, each next after twice the last, up to
	// ProbeIntervalMax. Defaults 1s and 5s: a provider back after any outage is found within 5s.
	ProbeInterval    time.Duration `yaml:"probeInterval"`
	ProbeIntervalMax time.Duration `yaml:"probeIntervalMax"`

	// MaxWait is how long a delivery may wait for a provider that cannot be reached
	// before it fails. Default 24h.
	MaxWait time.Duration `yaml:"maxWait"`

	// BreakerFailures transient failures in a row from one destination (a 4xx
	// reply of an SMTP relay, a send that timed out, a 5xx of a webhook), the
	// first no longer than BreakerWindow before the last, make it unavailable:
	// its deliveries wait for a probe to get through, charged nothing, as when
	// it refuses connections. Defaults 5 and 2m.
	BreakerFailures int           `yaml:"breakerFailures"`
	BreakerWindow   time.Duration `yaml:"breakerWindow"`

	// ReconcileAfter is how long a pending delivery may go without a change before the
	// reconciler checks that the stream still holds its message, and publishes it again
	// when it does not; ReconcileInterval is how often it looks. Defaults 1m and 30s.
	ReconcileAfter    time.Duration `yaml:"reconcileAfter"`
	ReconcileInterval time.Duration `yaml:"reconcileInterval"`

	// MaxAttempts is how many sends of one delivery are tried before it is
	// marked failed. Default 10. JetStream's MaxDeliver is set a few above it,
	// so redeliveries after crashes do not use up the budget.
	MaxAttempts int `yaml:"maxAttempts"`

	// BackoffBase is the retry delay after the first failed attempt; it
	// doubles with every further attempt up to BackoffCap, and the delay used
	// is drawn uniformly from zero to that value (full jitter). Default 5s.
	BackoffBase time.Duration `yaml:"backoffBase"`

	// BackoffCap is the largest retry delay. Default 30m.
	BackoffCap time.Duration `yaml:"backoffCap"`

	// SweepInterval is how often the outbox is swept for deliveries that no
	// Notify announced (handed over by another process, or left by a crash).
	// Default 5s.
	SweepInterval time.Duration `yaml:"sweepInterval"`

	// RelayBatch is how many outbox rows are published before their
	// acknowledgements are awaited and the rows deleted. Default 256.
	RelayBatch int `yaml:"relayBatch"`

	// MaxInFlightPerOwner bounds the deliveries of one owner, of one kind,
	// published to the stream and not yet final; the rest wait in the outbox,
	// and the relay publishes the owners' deliveries in turn. Another owner's
	// delivery then waits behind at most this many of each busy owner, and an
	// owner's webhooks held for a dead receiver do not hold its mail. Default 256.
	MaxInFlightPerOwner int `yaml:"maxInFlightPerOwner"`

	// Kinds tunes each channel kind; kinds left out get KindConfig's defaults.
	// app fills it from each kind's configuration section.
	Kinds map[channels.Kind]KindConfig `yaml:"-"`

	// VerifyRecipients holds every channel to an e-mail address or phone
	// number outside TrustedDomains until the address's holder follows the
	// signed link of a confirmation message; deliveries to it meanwhile fail
	// with "recipient not verified". For installations shared by people who
	// do not trust each other. Needs publicURL. Default false. The notify
	// side applies it; it lives here, in the delivery section, for its key.
	VerifyRecipients bool `yaml:"verifyRecipients"`

	// TrustedDomains are mail domains whose addresses, and those of their
	// subdomains, need no confirmation. Default none.
	TrustedDomains []string `yaml:"trustedDomains"`
}

// KindConfig tunes the delivery of one channel kind.
type KindConfig struct {
	// Concurrency is how many sends of the kind run at once in this
	// process. Default 4.
	Concurrency int

	// Rate limits sends of the kind per second (a token bucket). Default 0:
	// no limit.
	Rate float64

	// Burst is how many sends may go at once when the bucket is full.
	// Default: Rate rounded up, at least 1.
	Burst int

	// MaxPending is how many deliveries of the kind JetStream lets be in
	// flight or waiting for a retry at once, and how many one process holds
	// (fetched, waiting for a slot or its destination); beyond it the consumer
	// waits. Default 1000.
	MaxPending int

	// PerDestination bounds the sends to one destination at once, PerOwner
	// the sends of one owner's deliveries. Default Concurrency, each.
	PerDestination int
	PerOwner       int
}

// Defaults.
const (
	DefaultStream        = "HERALD_DELIVERIES"
	DefaultDedupeWindow  = 10 * time.Minute
	DefaultMaxAge        = 7 * 24 * time.Hour
	DefaultSendTimeout   = 30 * time.Second
	DefaultAckWait       = 5 * time.Second
	DefaultMaxAttempts   = 10
	DefaultBackoffBase   = 5 * time.Second
	DefaultBackoffCap    = 30 * time.Minute
	DefaultSweepInterval = 5 * time.Second
	DefaultRelayBatch    = 256
	// DefaultMaxInFlightPerOwner is Config.MaxInFlightPerOwner's default.
	DefaultMaxInFlightPerOwner = 256
	DefaultMaxPending          = 1000
	DefaultConcurrency         = 4

	// maxDeliverSlack is how many deliveries of a message JetStream allows
	// beyond MaxAttempts: redeliveries that were no attempt (a crash, a stop,
	// a lost ack) must not exhaust it first.
	maxDeliverSlack = 5
)

// Ledgers: where senders record each delivery's outcome (Config.Ledger).
const (
	LedgerSQLite    = "sqlite"
	LedgerJetStream = "jetstream"
)

// DefaultConfig returns the documented defaults, the delivery section of the
// configuration; Kinds is left for the caller.
func DefaultConfig() Config {
	return Config{Stream: DefaultStream, Ledger: LedgerSQLite, ResultsStream: DefaultResultsStream, DedupeWindow: DefaultDedupeWindow, MaxAge: DefaultMaxAge,
		SendTimeout: DefaultSendTimeout, AckWait: DefaultAckWait, ProbeInterval: time.Second, ProbeIntervalMax: 5 * time.Second,
		MaxWait: 24 * time.Hour, BreakerFailures: 5, BreakerWindow: 2 * time.Minute, ReconcileAfter: time.Minute,
		ReconcileInterval: 30 * time.Second, MaxAttempts: DefaultMaxAttempts, BackoffBase: DefaultBackoffBase,
		BackoffCap: DefaultBackoffCap, SweepInterval: DefaultSweepInterval, RelayBatch: DefaultRelayBatch,
		MaxInFlightPerOwner: DefaultMaxInFlightPerOwner, TrustedDomains: []string{}}
}

// Validate checks the bounds an operator may set, naming the key. Tests may
// build a worker with shorter times than these; withDefaults checks only
// that the values fit together.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Stream == "" || c.ResultsStream == "" || c.Stream == c.ResultsStream {
		bad("stream: stream and resultsStream must be two names")
	}
	if c.Ledger != LedgerSQLite && c.Ledger != LedgerJetStream {
		bad("ledger: %q is not one of sqlite, jetstream", c.Ledger)
	}
	if c.DedupeWindow < time.Second || c.DedupeWindow > c.MaxAge {
		bad("dedupeWindow: must be at least 1s and at most maxAge, got %s and %s", c.DedupeWindow, c.MaxAge)
	}
	if c.ProbeInterval < 10*time.Millisecond || c.ProbeIntervalMax < c.ProbeInterval {
		bad("probeInterval: must be at least 10ms and at most probeIntervalMax, got %s and %s", c.ProbeInterval, c.ProbeIntervalMax)
	}
	if c.ReconcileAfter < 10*time.Second || c.ReconcileInterval < time.Second {
		bad("reconcileAfter: must be at least 10s, with reconcileInterval at least 1s; got %s and %s", c.ReconcileAfter, c.ReconcileInterval)
	}
	if c.MaxWait < time.Minute {
		bad("maxWait: must be at least 1m, got %s", c.MaxWait)
	}
	if c.BreakerFailures < 1 || c.BreakerWindow < time.Second {
		bad("breakerFailures: must be at least 1, with breakerWindow at least 1s; got %d and %s", c.BreakerFailures, c.BreakerWindow)
	}
	if c.AckWait < time.Second {
		bad("ackWait: must be at least 1s, got %s", c.AckWait)
	}
	if c.MaxAttempts < 1 {
		bad("maxAttempts: must be at least 1")
	}
	if c.BackoffBase <= 0 || c.BackoffCap < c.BackoffBase {
		bad("backoffCap: must be at least backoffBase, and the base above zero")
	}
	if c.SendTimeout < time.Second {
		bad("sendTimeout: must be at least 1s")
	}
	if c.SweepInterval < 100*time.Millisecond || c.RelayBatch < 1 {
		bad("sweepInterval: must be at least 100ms, with relayBatch at least 1")
	}
	if c.MaxInFlightPerOwner < 1 {
		bad("maxInFlightPerOwner: must be at least 1, got %d", c.MaxInFlightPerOwner)
	}
	for i, d := range c.TrustedDomains {
		if !mailDomain.MatchString(strings.TrimSpace(d)) {
			bad("trustedDomains[%d]: %q is not a mail domain such as example.com", i, d)
		}
	}
	return errors.Join(errs...)
}

// mailDomain is a domain name of two labels or more, as the part of an
// e-mail address after its @.
var mailDomain = regexp.MustCompile(`^(?i)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// withDefaults returns c with every zero field set to DefaultConfig's.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	c.Stream = cmp.Or(c.Stream, d.Stream)
	c.ResultsStream = cmp.Or(c.ResultsStream, d.ResultsStream)
	c.Ledger = cmp.Or(c.Ledger, d.Ledger)
	c.DedupeWindow = cmp.Or(c.DedupeWindow, d.DedupeWindow)
	c.MaxAge = cmp.Or(c.MaxAge, d.MaxAge)
	c.Replicas = cmp.Or(c.Replicas, 1)
	c.SendTimeout = cmp.Or(c.SendTimeout, d.SendTimeout)
	c.AckWait = cmp.Or(c.AckWait, d.AckWait)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, d.MaxAttempts)
	c.ProbeInterval = cmp.Or(c.ProbeInterval, d.ProbeInterval)
	c.ProbeIntervalMax = cmp.Or(c.ProbeIntervalMax, d.ProbeIntervalMax)
	c.MaxWait = cmp.Or(c.MaxWait, d.MaxWait)
	c.BreakerFailures = cmp.Or(c.BreakerFailures, d.BreakerFailures)
	c.BreakerWindow = cmp.Or(c.BreakerWindow, d.BreakerWindow)
	c.ReconcileAfter = cmp.Or(c.ReconcileAfter, d.ReconcileAfter)
	c.ReconcileInterval = cmp.Or(c.ReconcileInterval, d.ReconcileInterval)
	c.BackoffBase = cmp.Or(c.BackoffBase, d.BackoffBase)
	c.BackoffCap = cmp.Or(c.BackoffCap, d.BackoffCap)
	c.SweepInterval = cmp.Or(c.SweepInterval, d.SweepInterval)
	c.RelayBatch = cmp.Or(c.RelayBatch, d.RelayBatch)
	c.MaxInFlightPerOwner = cmp.Or(c.MaxInFlightPerOwner, d.MaxInFlightPerOwner)
	kinds := make(map[channels.Kind]KindConfig, len(c.Kinds))
	for k, kc := range c.Kinds {
		kinds[k] = kc.withDefaults()
	}
	c.Kinds = kinds
	switch {
	case c.AckWait < time.Second:
		return c, fmt.Errorf("worker config: ack wait %v is below 1s", c.AckWait)
	case c.DedupeWindow > c.MaxAge:
		return c, fmt.Errorf("worker config: dedupe window %v exceeds the stream's max age %v", c.DedupeWindow, c.MaxAge)
	case c.ProbeIntervalMax < c.ProbeInterval:
		return c, fmt.Errorf("worker config: probe interval cap %v is below its start %v", c.ProbeIntervalMax, c.ProbeInterval)
	case c.BackoffCap < c.BackoffBase:
		return c, fmt.Errorf("worker config: backoff cap %v is below its base %v", c.BackoffCap, c.BackoffBase)
	case c.DedupeWindow < 0 || c.SendTimeout < 0 || c.MaxAttempts < 0 || c.BackoffBase < 0 ||
		c.SweepInterval < 0 || c.RelayBatch < 0 || c.Replicas < 0 || c.MaxInFlightPerOwner < 0:
		return c, errors.New("worker config: negative value")
	}
	for kind, k := range c.Kinds {
		if k.Concurrency < 0 || k.Rate < 0 || k.Burst < 0 || k.MaxPending < 0 || k.PerDestination < 0 || k.PerOwner < 0 {
			return c, fmt.Errorf("worker config: negative value for %s", kind)
		}
	}
	return c, nil
}

// Keep is how long what a delivery message references is kept: its files in
// the object store, its ledger entry and its outcome. Twice MaxAge, so that a
// message published late in the life of a file it shares with earlier ones
// can still wait its whole MaxAge.
func (c Config) Keep() time.Duration { return 2 * cmp.Or(c.MaxAge, DefaultMaxAge) }

// kindConfig returns the tuning of kind k, its defaults where Config.Kinds has none.
func (c Config) kindConfig(k channels.Kind) KindConfig {
	if kc, ok := c.Kinds[k]; ok {
		return kc
	}
	return KindConfig{}.withDefaults()
}

func (k KindConfig) withDefaults() KindConfig {
	k.Concurrency = cmp.Or(k.Concurrency, DefaultConcurrency)
	k.Burst = cmp.Or(k.Burst, max(1, int(math.Ceil(k.Rate))))
	k.MaxPending = cmp.Or(k.MaxPending, DefaultMaxPending)
	k.PerDestination = min(cmp.Or(k.PerDestination, k.Concurrency), k.Concurrency)
	k.PerOwner = min(cmp.Or(k.PerOwner, k.Concurrency), k.Concurrency)
	return k
}
