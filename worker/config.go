package worker

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/heraldhq/herald/channels"
)

// Config tunes delivery. The zero value of every field means its default.
type Config struct {
	// Stream is the JetStream stream that carries deliveries. Default
	// "HERALD_DELIVERIES".
	Stream string

	// DedupeWindow is how long JetStream remembers a delivery id it was
	// given, so that a delivery published again within the window (after a
	// crash between the publish and the outbox delete) is dropped. Default 10m.
	DedupeWindow time.Duration

	// MaxAge is how long a delivery may wait in the stream for a sender of
	// its kind before JetStream drops it. Default 168h (7 days).
	MaxAge time.Duration

	// Replicas is the stream's replica count in a NATS cluster. Default 1.
	Replicas int

	// SendTimeout bounds one send to a provider, and with it how long a
	// stopping worker waits for the sends in flight. Default 30s.
	SendTimeout time.Duration

	// AckWait is how long JetStream waits for the outcome of a delivery it
	// handed out before it hands it out again. While this process holds a
	// message (waiting for a send slot, or sending) it tells JetStream so every
	// AckWait/3, so AckWait bounds only how long the messages of a process that
	// died wait to be handed out again. Default 5s.
	AckWait time.Duration

	// ProbeInterval and ProbeIntervalMax pace the probes of a provider that cannot be
	// reached: the first after ProbeInterval, each next after twice the last, up to
	// ProbeIntervalMax. Defaults 1s and 5s: a provider back after any outage is found within 5s.
	ProbeInterval    time.Duration
	ProbeIntervalMax time.Duration

	// MaxWait is how long a delivery may wait for a provider that cannot be reached
	// before it fails. Default 24h.
	MaxWait time.Duration

	// ReconcileAfter is how long a pending delivery may go without a change before the
	// reconciler checks that the stream still holds its message, and publishes it again
	// when it does not; ReconcileInterval is how often it looks. Defaults 1m and 30s.
	ReconcileAfter    time.Duration
	ReconcileInterval time.Duration

	// MaxAttempts is how many sends of one delivery are tried before it is
	// marked failed. Default 10. JetStream's MaxDeliver is set a few above it,
	// so redeliveries after crashes do not use up the budget.
	MaxAttempts int

	// BackoffBase is the retry delay after the first failed attempt; it
	// doubles with every further attempt up to BackoffCap, and the delay used
	// is drawn uniformly from zero to that value (full jitter). Default 5s.
	BackoffBase time.Duration

	// BackoffCap is the largest retry delay. Default 30m.
	BackoffCap time.Duration

	// SweepInterval is how often the outbox is swept for deliveries that no
	// Notify announced (handed over by another process, or left by a crash).
	// Default 5s.
	SweepInterval time.Duration

	// RelayBatch is how many outbox rows are published before their
	// acknowledgements are awaited and the rows deleted. Default 256.
	RelayBatch int

	// Kinds tunes each channel kind; kinds left out get KindConfig's defaults.
	// app fills it from each kind's configuration section.
	Kinds map[channels.Kind]KindConfig
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
	// flight or waiting for a retry at once; beyond it the consumer waits.
	// Default 1000.
	MaxPending int
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
	DefaultMaxPending    = 1000
	DefaultConcurrency   = 4

	// maxDeliverSlack is how many deliveries of a message JetStream allows
	// beyond MaxAttempts: redeliveries that were no attempt (a crash, a stop,
	// a lost ack) must not exhaust it first.
	maxDeliverSlack = 5
)

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() (Config, error) {
	c.Stream = cmp.Or(c.Stream, DefaultStream)
	c.DedupeWindow = cmp.Or(c.DedupeWindow, DefaultDedupeWindow)
	c.MaxAge = cmp.Or(c.MaxAge, DefaultMaxAge)
	c.Replicas = cmp.Or(c.Replicas, 1)
	c.SendTimeout = cmp.Or(c.SendTimeout, DefaultSendTimeout)
	c.AckWait = cmp.Or(c.AckWait, DefaultAckWait)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.ProbeInterval = cmp.Or(c.ProbeInterval, time.Second)
	c.ProbeIntervalMax = cmp.Or(c.ProbeIntervalMax, 5*time.Second)
	c.MaxWait = cmp.Or(c.MaxWait, 24*time.Hour)
	c.ReconcileAfter = cmp.Or(c.ReconcileAfter, time.Minute)
	c.ReconcileInterval = cmp.Or(c.ReconcileInterval, 30*time.Second)
	c.BackoffBase = cmp.Or(c.BackoffBase, DefaultBackoffBase)
	c.BackoffCap = cmp.Or(c.BackoffCap, DefaultBackoffCap)
	c.SweepInterval = cmp.Or(c.SweepInterval, DefaultSweepInterval)
	c.RelayBatch = cmp.Or(c.RelayBatch, DefaultRelayBatch)
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
		c.SweepInterval < 0 || c.RelayBatch < 0 || c.Replicas < 0:
		return c, errors.New("worker config: negative value")
	}
	for kind, k := range c.Kinds {
		if k.Concurrency < 0 || k.Rate < 0 || k.Burst < 0 || k.MaxPending < 0 {
			return c, fmt.Errorf("worker config: negative value for %s", kind)
		}
	}
	return c, nil
}

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
	return k
}
