package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/secret"
)

// subjectPrefix is the start of every delivery subject: herald.deliveries.<kind>.
const subjectPrefix = "herald.deliveries."

func subject(kind string) string { return subjectPrefix + kind }

// deliverySubject is the subject of one delivery's message: its kind's, with the
// delivery id appended, so that the stream can be asked whether it still holds it.
func deliverySubject(kind, id string) string { return subject(kind) + "." + id }

// durable is the name of the durable consumer of a kind.
func durable(kind channels.Kind) string { return "herald-" + string(kind) }

// Options are the parts of a Worker or a Relay that are not configuration. A
// Worker reads Logger and Registerer; the rest serve the Relay (a ledger has
// a clock of its own).
type Options struct {
	// Logger receives the log. Default: discarded.
	Logger *slog.Logger
	// Clock stamps the relay's writes and paces the relay and the consumers
	// (sweeps, retries, heartbeats). Default: the real clock.
	Clock clock.Clock
	// Sweep, when set, replaces the relay's ticker that sweeps the outbox every
	// Config.SweepInterval: each value received starts a sweep.
	Sweep <-chan time.Time
	// Registerer receives the metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer
	// Recorded is told after each write of final delivery states to the
	// store, which may have settled runs. Default: nobody.
	Recorded func()

	// onHeartbeat, a test hook, is told after each heartbeat of a kind.
	onHeartbeat func()
	// onCallOff, a test hook, is told of each call-off the worker handled.
	onCallOff func(CallOff)
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o Options) clock() clock.Clock { return clock.Or(o.Clock) }

func (o Options) recorded() func() {
	if o.Recorded == nil {
		return func() {}
	}
	return o.Recorded
}

// Worker is the sending side of delivery, in the control process or on any
// other machine: one consumer per channel kind takes the messages the relay
// published, sends each through its channels.Sender with retries, and keeps
// the ledger.
type Worker struct {
	js       jetstream.JetStream
	ledger   Ledger
	files    fileFetcher
	delivery *secret.Box // opens the secrets the relay sealed
	cfg      Config
	log      *slog.Logger
	clock    clock.Clock // paces the sends: rate, backoff, heartbeats
	rnd      func(int64) int64
	kinds    []*kind
	running  sync.Map  // delivery ids being handled in this process
	ends     *sendEnds // the handlings that ended lately; nil unless entries are read ahead
	metrics  *metrics
	ready    atomic.Bool // Run has set up the stream and the consumers

	// onSettle, a test hook, is told what became of each message handled.
	onSettle func(id string, o outcome)
	// onCallOff is Options.onCallOff.
	onCallOff func(CallOff)
	// onHeartbeat is Options.onHeartbeat.
	onHeartbeat func()
}

// kind is what a consumer needs to deliver one channel kind.
type kind struct {
	kind    channels.Kind
	sender  channels.Sender
	cfg     KindConfig
	limiter *rate.Limiter // nil: no limit
	pool    *pool         // the messages fetched and not yet settled
	// unrecorded counts the accepted sends whose outcome the ledger has yet
	// to record (see Worker.deliver).
	unrecorded atomic.Int64
}

// New returns a Worker that delivers with the given senders, at most one per
// kind; deliveries of a kind without a sender wait in the stream. ledger
// records each outcome, files fetches the attachments, and delivery opens the
// secrets sealed with the delivery key (nil when no channel has one).
func New(js jetstream.JetStream, ledger Ledger, files *Files, delivery *secret.Box, senders []channels.Sender, cfg Config, opt Options) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		js: js, ledger: ledger, files: files, delivery: delivery, cfg: cfg,
		log: opt.logger(), clock: opt.clock(), rnd: rand.Int64N, metrics: newMetrics(opt.Registerer),
		onHeartbeat: opt.onHeartbeat, onCallOff: opt.onCallOff,
	}
	if _, ok := ledger.(entryReader); ok {
		w.ends = newSendEnds()
	}
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
		policy := breakerPolicy{probeMin: cfg.ProbeInterval, probeMax: cfg.ProbeIntervalMax,
			failures: cfg.BreakerFailures, window: cfg.BreakerWindow}
		w.kinds = append(w.kinds, &kind{kind: k, sender: s, cfg: kc, limiter: lim,
			pool: newPool(policy, kc.PerDestination, kc.PerOwner)})
	}
	if opt.Registerer != nil {
		if err := opt.Registerer.Register(newCollector(w)); err != nil {
			return nil, fmt.Errorf("worker: register metrics: %w", err)
		}
	}
	w.metrics.startAtZero(w.kinds)
	return w, nil
}

// CheckProviders reports the kinds whose provider of the process's own
// configuration (the SMTP relay or the outbox folder, the SMS account) takes
// nothing for now, and since when: their deliveries are held, not failed.
// A webhook's or a Slack workspace's destination is its owner's, not the
// process's, and is not reported.
func (w *Worker) CheckProviders(context.Context) error {
	var errs []error
	for _, k := range w.kinds {
		if since, why, held := k.pool.heldDefault(); held {
			errs = append(errs, fmt.Errorf("%s: the provider takes nothing since %s, its deliveries wait: %s",
				k.kind, since.UTC().Format(time.RFC3339), why))
		}
	}
	return errors.Join(errs...)
}

// Check reports whether Run has set up the stream and the consumers, and
// whether the stream can be reached.
func (w *Worker) Check(ctx context.Context) error {
	if !w.ready.Load() {
		return errNotSetUp
	}
	_, err := w.js.Stream(ctx, w.cfg.Stream)
	return err
}

// Run creates the stream and the consumers if needed (or updates them to the
// configuration), then delivers until ctx ends. Call it once. It returns once
// the messages in flight are settled: their sends and ledger writes are not
// cut by ctx but bounded by Config.SendTimeout. It returns early with an
// error when the stream cannot be set up or a consumer's subscription ends.
func (w *Worker) Run(ctx context.Context) error {
	consumers, err := w.setup(ctx)
	if err != nil {
		return err
	}
	stopCallOffs, err := w.listenCallOffs()
	if err != nil {
		return err
	}
	defer stopCallOffs()
	w.ready.Store(true)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { w.pruneLoop(ctx) })
	errs := make([]error, len(consumers))
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

// flush makes sure the acknowledgements sent so far reached the server, so
// that the messages handed back when stopping go out again at once rather
// than after the ack wait.
func (w *Worker) flush() {
	if err := w.js.Conn().FlushTimeout(time.Second); err != nil {
		w.log.Debug("flush acknowledgements", "err", err)
	}
}

// Local copies of attachments not used for scratchAge are removed every
// pruneEvery: a report mailed to many is fetched once and reused meanwhile.
const (
	pruneEvery = 10 * time.Minute
	scratchAge = time.Hour
)

// pruneLoop keeps the scratch folder to the files in use, until ctx ends.
func (w *Worker) pruneLoop(ctx context.Context) {
	t := w.clock.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := w.files.Prune(scratchAge); err != nil {
				w.log.Warn("prune the scratch folder", "err", err)
			}
		}
	}
}

// setup creates or updates the stream and one durable consumer per kind
// this worker has a sender for.
func (w *Worker) setup(ctx context.Context) ([]jetstream.Consumer, error) {
	stream, err := ensureStream(ctx, w.log, w.js, w.cfg)
	if err != nil {
		return nil, err
	}
	var out []jetstream.Consumer
	for _, k := range w.kinds {
		c, err := w.consumer(ctx, stream, k)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// consumer creates or updates the durable consumer of kind k.
func (w *Worker) consumer(ctx context.Context, stream jetstream.Stream, k *kind) (c jetstream.Consumer, err error) {
	err = untilAvailable(ctx, w.log, "consumer "+durable(k.kind), func(ctx context.Context) (err error) {
		c, err = stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
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
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", durable(k.kind), err)
	}
	return c, nil
}

// ensureStream creates the delivery stream, or updates it when its
// configuration differs from cfg's. The relay and every worker call it as they
// start; leaving a stream that is as it should be alone keeps their starts
// from updating it under each other's consumers (which nats-server v2.15.2
// does not guard: its race detector reports the two).
func ensureStream(ctx context.Context, log *slog.Logger, js jetstream.JetStream, cfg Config) (jetstream.Stream, error) {
	want := jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "Herald deliveries, one self-contained message per delivery id",
		Subjects:    []string{subjectPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		MaxAge:      cfg.MaxAge,
		Duplicates:  cfg.DedupeWindow,
	}
	return applyStream(ctx, log, js, "delivery stream", want)
}

// applyStream creates the stream want describes, or updates it when it
// differs from want, waiting while JetStream is unavailable (untilAvailable,
// the step named what). Parts that start together and find no stream each
// create it: JetStream answers a creation equal to the stream it holds with
// that stream, where an update would race their consumers.
func applyStream(ctx context.Context, log *slog.Logger, js jetstream.JetStream, what string, want jetstream.StreamConfig) (s jetstream.Stream, err error) {
	err = untilAvailable(ctx, log, what, func(ctx context.Context) (err error) {
		s, err = applyStreamOnce(ctx, js, want)
		return err
	})
	return s, err
}

// applyStreamOnce is one try of applyStream.
func applyStreamOnce(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, want.Name) // created since with another configuration
		}
	}
	if err == nil {
		if got := s.CachedInfo().Config; got.Description == want.Description && slices.Equal(got.Subjects, want.Subjects) &&
			got.Retention == want.Retention && got.Storage == want.Storage && got.Replicas == want.Replicas &&
			got.MaxAge == want.MaxAge && got.Duplicates == want.Duplicates {
			return s, nil
		}
	}
	stream, err := js.CreateOrUpdateStream(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", want.Name, err)
	}
	return stream, nil
}
