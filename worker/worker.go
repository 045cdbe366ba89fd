package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
)

// subjectPrefix is the start of every delivery subject: herald.deliveries.<kind>.
const subjectPrefix = "herald.deliveries."

func subject(kind string) string { return subjectPrefix + kind }

// deliverySubject is the subject of one delivery's message: its kind's, with the
// delivery id appended, so that the stream can be asked whether it still holds it.
func deliverySubject(kind, id string) string { return subject(kind) + "." + id }

// durable is the name of the durable consumer of a kind.
func durable(kind channels.Kind) string { return "herald-" + string(kind) }

// Options are the parts of a Worker that are not configuration.
type Options struct {
	// Logger receives the worker's log. Default: discarded.
	Logger *slog.Logger
	// Now is the clock of the ledger's timestamps. Default time.Now.
	Now func() time.Time
	// Sweep, when set, replaces the ticker that sweeps the outbox every
	// Config.SweepInterval: each value received starts a sweep.
	Sweep <-chan time.Time
	// Registerer receives the worker's metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer
	// Recorded is told after each write of final delivery states to the ledger,
	// which may have settled runs. Default: nobody.
	Recorded func()
}

// Worker delivers the runs handed over in the store: its relay publishes the
// outbox to JetStream, and one consumer per channel kind sends what it
// receives and keeps the ledger.
type Worker struct {
	st      *store.Store
	box     *secret.Box
	js      jetstream.JetStream
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	sweep   <-chan time.Time
	rnd     func(int64) int64
	kinds   []*kind
	ledger  *SQLiteLedger
	wake    chan struct{}
	running sync.Map // delivery ids being handled in this process
	metrics *metrics
	// recorded is told after each ledger write of final states.
	recorded func()

	// Test hooks: onSettle is told what became of each message handled,
	// onRelayIdle when the relay has emptied the outbox and waits.
	onSettle    func(id string, o outcome)
	onRelayIdle func()
}

// kind is what a consumer needs to deliver one channel kind.
type kind struct {
	kind    channels.Kind
	sender  channels.Sender
	cfg     KindConfig
	limiter *rate.Limiter // nil: no limit
	held    sync.Map      // *task → struct{}: the messages pulled and not yet settled
	breaker *breaker
}

// New returns a Worker that delivers with the given senders, at most one per
// kind; deliveries of a kind without a sender wait in the stream. box opens
// the channels' sealed passwords; it may be nil when none are sealed.
func New(st *store.Store, box *secret.Box, js jetstream.JetStream, senders []channels.Sender, cfg Config, opt Options) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		st: st, box: box, js: js, cfg: cfg,
		log: opt.Logger, now: opt.Now, sweep: opt.Sweep,
		rnd:  rand.Int64N,
		wake: make(chan struct{}, 1),

		metrics: newMetrics(opt.Registerer),
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.now == nil {
		w.now = time.Now
	}
	w.recorded = opt.Recorded
	if w.recorded == nil {
		w.recorded = func() {}
	}
	w.ledger = NewSQLiteLedger(st, w.now, w.recorded)
	seen := make(map[channels.Kind]bool)
	for _, s := range senders {
		k := s.Kind()
		if k == "" {
			return nil, errors.New("worker: a sender without a kind")
		}
		if seen[k] {
			return nil, fmt.Errorf("worker: two senders of kind %s", k)
		}
		seen[k] = true
		kc := cfg.kindConfig(k)
		var lim *rate.Limiter
		if kc.Rate > 0 {
			lim = rate.NewLimiter(rate.Limit(kc.Rate), kc.Burst)
		}
		w.kinds = append(w.kinds, &kind{kind: k, sender: s, cfg: kc, limiter: lim,
			breaker: newBreaker(cfg.ProbeInterval, cfg.ProbeIntervalMax)})
	}
	if opt.Registerer != nil {
		if err := opt.Registerer.Register(newCollector(w)); err != nil {
			return nil, fmt.Errorf("worker: register metrics: %w", err)
		}
	}
	return w, nil
}

// Check reports whether the delivery stream can be reached.
func (w *Worker) Check(ctx context.Context) error {
	_, err := w.js.Stream(ctx, w.cfg.Stream)
	return err
}

// Notify wakes the relay to publish the outbox now; the engine calls it after
// a handover. It never blocks.
func (w *Worker) Notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run creates the stream and the consumers if needed (or updates them to the
// configuration), then relays and delivers until ctx ends. Call it once. It returns once
// the messages in flight are settled: their sends and ledger writes are not
// cut by ctx but bounded by Config.SendTimeout. It returns early with an
// error when the stream cannot be set up or a consumer's subscription ends.
func (w *Worker) Run(ctx context.Context) error {
	consumers, err := w.setup(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(consumers))
	wg.Go(func() { w.relay(ctx) })
	wg.Go(func() { w.reconcileLoop(ctx) })
	for i, c := range consumers {
		wg.Go(func() {
			if errs[i] = w.consume(ctx, w.kinds[i], c); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setup creates or updates the stream and one durable consumer per kind
// this worker has a sender for.
func (w *Worker) setup(ctx context.Context) ([]jetstream.Consumer, error) {
	stream, err := w.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        w.cfg.Stream,
		Description: "Herald deliveries, one message per delivery id",
		Subjects:    []string{subjectPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    w.cfg.Replicas,
		MaxAge:      w.cfg.MaxAge,
		Duplicates:  w.cfg.DedupeWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", w.cfg.Stream, err)
	}
	var out []jetstream.Consumer
	for _, k := range w.kinds {
		c, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:     durable(k.kind),
			Description: "Herald " + string(k.kind) + " sender",
			// The kind's subject too: messages published before deliveries had a subject each.
			FilterSubjects: []string{subject(string(k.kind)), subject(string(k.kind)) + ".>"},
			DeliverPolicy:  jetstream.DeliverAllPolicy,
			AckPolicy:      jetstream.AckExplicitPolicy,
			AckWait:        w.cfg.AckWait,
			MaxDeliver:     w.cfg.MaxAttempts + maxDeliverSlack,
			MaxAckPending:  k.cfg.MaxPending,
		})
		if err != nil {
			return nil, fmt.Errorf("create consumer %s: %w", durable(k.kind), err)
		}
		out = append(out, c)
	}
	return out, nil
}
