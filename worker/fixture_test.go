package worker

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
	"github.com/nats-io/nats-server/v2/server"
)

// testTimeout bounds every wait of a test for something to happen.
const testTimeout = 15 * time.Second

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// env is a data folder with a store, a secret key, one user and one of the
// user's subscriptions.
type env struct {
	t      *testing.T
	dbPath string
	st     *store.Store
	box    *secret.Box // the key at rest
	// deliveryBox seals secrets in delivery messages.
	deliveryBox *secret.Box
	owner       string
	sub         string
	runs        atomic.Int64 // runs enqueued; names the next instant
	// ledger is the ledger the env's workers keep: LedgerSQLite, or
	// LedgerJetStream, whose outcomes reach the store through the relay.
	ledger string
}

func newEnv(t *testing.T) *env { return newEnvOn(t, LedgerSQLite) }

// eachLedger runs test once over each ledger, as a subtest named after it.
func eachLedger(t *testing.T, test func(t *testing.T, e *env)) {
	for _, l := range []string{LedgerSQLite, LedgerJetStream} {
		t.Run(l, func(t *testing.T) {
			t.Parallel()
			test(t, newEnvOn(t, l))
		})
	}
}

// newEnvOn is a new env whose workers keep the given ledger.
func newEnvOn(t *testing.T, ledger string) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "herald.db"), owner: "u1", sub: "s1", ledger: ledger}
	st, err := store.Open(ctx, e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.st = st
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	if e.box, err = secret.New(key); err != nil {
		t.Fatal(err)
	}
	if e.deliveryBox, err = secret.New(secret.Derive(key, "delivery")); err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureDomain(ctx, "default", t0); err != nil {
		t.Fatal(err)
	}
	u := store.User{ID: e.owner, Domain: "default", Login: "owner@example.com", PasswordHash: "x", Created: t0, Updated: t0}
	if err := st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p := store.Project{ID: "p1", Title: "P", State: store.ProjectEnabled, Author: e.owner, Contributor: e.owner, Created: t0, Updated: t0}
	if err := st.CreateProject(ctx, p, "admin"); err != nil {
		t.Fatal(err)
	}
	sub := store.Subscription{ID: e.sub, ProjectID: "p1", Owner: e.owner, Title: "Daily revenue", Enabled: true, Created: t0, Updated: t0}
	if err := st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// mailTo is an e-mail channel to address.
func mailTo(address string) channels.Channel {
	return channels.Channel{Kind: "email", Config: json.RawMessage(`{"to":` + strconv.Quote(address) + `}`)}
}

// addOwner adds a user with a subscription of the env's project and
// returns the subscription's id.
func (e *env) addOwner(user string) string {
	e.t.Helper()
	ctx := context.Background()
	u := store.User{ID: user, Domain: "default", Login: user + "@example.com", PasswordHash: "x", Created: t0, Updated: t0}
	if err := e.st.CreateUser(ctx, u); err != nil {
		e.t.Fatal(err)
	}
	sub := store.Subscription{ID: "s-" + user, ProjectID: "p1", Owner: user, Title: "Alerts of " + user, Enabled: true,
		Created: t0, Updated: t0}
	if err := e.st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
		e.t.Fatal(err)
	}
	return sub.ID
}

// channel stores a channel like c of the env's owner, its password sealed,
// and returns its id.
func (e *env) channel(c channels.Channel) string { return e.channelOf(e.owner, c) }

// channelOf stores a channel like c of owner.
func (e *env) channelOf(owner string, c channels.Channel) string {
	e.t.Helper()
	id := store.NewID(16)
	sc := store.Channel{ID: id, Owner: owner, Kind: string(c.Kind), Title: string(c.Kind),
		Config: c.Config, Created: t0, Updated: t0}
	if c.Secret != "" {
		sc.Secret = e.box.Seal([]byte(c.Secret), []byte(id))
	}
	if err := e.st.CreateChannel(context.Background(), sc, store.Quota{}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// enqueue hands over a run of the next instant with one delivery of p to
// each channel and returns the run and its delivery ids, in channel order.
func (e *env) enqueue(p store.Payload, channelIDs ...string) (store.Run, []string) {
	e.t.Helper()
	return e.enqueueTo(e.sub, p, channelIDs...)
}

// enqueueUnrelayed is enqueue with the deliveries' outbox rows taken away:
// the test publishes their messages itself, or they were published before.
func (e *env) enqueueUnrelayed(p store.Payload, channelIDs ...string) []string {
	e.t.Helper()
	_, ids := e.enqueue(p, channelIDs...)
	if err := e.st.DeleteOutbox(context.Background(), ids...); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// enqueueTo is enqueue for subscription sub.
func (e *env) enqueueTo(sub string, p store.Payload, channelIDs ...string) (store.Run, []string) {
	e.t.Helper()
	ctx := context.Background()
	at := t0.Add(time.Duration(e.runs.Add(1)) * time.Minute)
	run := store.Run{ID: store.NewID(16), SubscriptionID: sub, ScheduledAt: at, Started: at}
	ds := make([]store.Delivery, 0, len(channelIDs))
	ids := make([]string, 0, len(channelIDs))
	for _, ch := range channelIDs {
		c, err := e.st.ChannelByID(ctx, ch)
		kind := ""
		if err == nil {
			kind = c.Kind
		} else if errors.Is(err, store.ErrNotFound) {
			kind = "email"
		} else {
			e.t.Fatal(err)
		}
		id := store.NewID(20)
		ds = append(ds, store.Delivery{ID: id, ChannelID: ch, Kind: kind, Payload: p})
		ids = append(ids, id)
	}
	if err := e.st.EnqueueRun(ctx, run, ds); err != nil {
		e.t.Fatal(err)
	}
	return run, ids
}

func (e *env) delivery(id string) store.Delivery {
	e.t.Helper()
	d, err := e.st.Delivery(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *env) run(id string) store.Run {
	e.t.Helper()
	r, err := e.st.RunByID(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// startNATS starts an embedded server with its storage in dir; it is closed
// when the test ends unless the test closed it first.
func startNATS(t *testing.T, dir string) *NATS {
	t.Helper()
	n, err := StartEmbedded(dir, EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(n.Close) })
	return n
}

// startServer starts a NATS server with opts, shut down when the test ends
// unless the test did first.
func startServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(testTimeout) {
		t.Fatal("nats server not ready")
	}
	return srv
}

// crash ends the connection and the embedded server the way a dying
// process would: nothing is flushed, drained or acknowledged.
func crash(n *NATS) {
	n.nc.Close()
	if n.srv != nil { // embedded: the server dies with the process
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
	}
}

// testConfig retries fast: backoffs of a few milliseconds.
func testConfig() Config {
	return Config{
		SendTimeout: 10 * time.Second,
		AckWait:     20 * time.Second,
		MaxAttempts: 5,
		BackoffBase: time.Millisecond,
		BackoffCap:  5 * time.Millisecond,
	}
}

// settled is one message a worker handled.
type settled struct {
	id string
	o  outcome
}

// running is a relay and a worker started by start, as one process runs them.
type running struct {
	w      *Worker
	relay  *Relay
	events chan settled
	seen   map[settled]int // events read by await and not yet awaited
	sweep  chan time.Time
	idle   chan struct{}
	cancel context.CancelFunc
	done   chan error
}

// start runs a relay and a worker with the SQLite ledger until stop is called
// or the test ends.
func (e *env) start(n *NATS, senders []channels.Sender, cfg Config) *running {
	e.t.Helper()
	return e.startWith(n, senders, cfg, Options{})
}

// startWith is start with the worker's options opt (its logger and hooks
// are the fixture's).
func (e *env) startWith(n *NATS, senders []channels.Sender, cfg Config, opt Options) *running {
	e.t.Helper()
	r := &running{events: make(chan settled, 8192), seen: make(map[settled]int), sweep: make(chan time.Time), idle: make(chan struct{}, 1), done: make(chan error, 1)}
	files := e.files(n)
	cfg.Ledger = e.ledger
	relay := e.relay(n, files, cfg, Options{Logger: testLogger(e.t), Sweep: r.sweep})
	var ledger Ledger = NewSQLiteLedger(e.st, nil, func(ids []string) { relay.Settled(ids...) })
	if e.ledger == LedgerJetStream {
		kv, err := NewKVLedger(context.Background(), n.JetStream(), KVLedgerConfig{Owner: rand.Text(), Lease: cfg.AckWait, Logger: testLogger(e.t)})
		if err != nil {
			e.t.Fatal(err)
		}
		ledger = kv
	}
	if opt.Logger == nil {
		opt.Logger = testLogger(e.t)
	}
	w, err := New(n.JetStream(), ledger, files, e.deliveryBox, senders, cfg, opt)
	if err != nil {
		e.t.Fatal(err)
	}
	w.onSettle = func(id string, o outcome) { r.events <- settled{id, o} }
	relay.onRelayIdle = func() {
		select {
		case r.idle <- struct{}{}:
		default:
		}
	}
	r.w, r.relay = w, relay
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		var both sync.WaitGroup
		var relayErr, workerErr error
		both.Go(func() { relayErr = relay.Run(ctx) })
		both.Go(func() { workerErr = w.Run(ctx) })
		both.Wait()
		r.done <- errors.Join(stopped(ctx, relayErr), stopped(ctx, workerErr))
	}()
	e.t.Cleanup(func() { r.stop(e.t) })
	return r
}

// stopped drops the error of a part stopped while it was still setting up, as
// the app does: the relay can be, when the worker settled everything first.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// files opens the delivery object store of n with a scratch folder of the test's.
func (e *env) files(n *NATS) *Files {
	e.t.Helper()
	f, err := OpenFiles(context.Background(), n.JetStream(), FilesConfig{Scratch: e.t.TempDir()})
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// relay returns a relay of the env's store over n, not running.
func (e *env) relay(n *NATS, files *Files, cfg Config, opt Options) *Relay {
	e.t.Helper()
	if files == nil {
		files = e.files(n)
	}
	r, err := NewRelay(e.st, n.JetStream(), files, e.box, e.deliveryBox, cfg, opt)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// envelope seals the message of delivery id as the relay would publish it.
func (e *env) envelope(n *NATS, id string) []byte {
	e.t.Helper()
	ctx := context.Background()
	out, err := e.st.OutgoingDeliveries(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	data, err := seal(ctx, out[id], e.box, e.deliveryBox, e.files(n), 1<<20)
	if err != nil {
		e.t.Fatal(err)
	}
	return data
}

// publish relays the outbox once, as a relay that then stopped would.
func (e *env) publish(n *NATS, cfg Config) {
	e.t.Helper()
	r := e.relay(n, nil, cfg, Options{Logger: testLogger(e.t)})
	ctx := context.Background()
	if _, err := ensureStream(ctx, testLogger(e.t), n.JetStream(), r.cfg); err != nil {
		e.t.Fatal(err)
	}
	if err := r.publishOutbox(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// stop ends the worker and waits for Run to return; later calls do nothing.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if r.done == nil {
		return
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("worker: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("worker did not stop")
	}
	r.done = nil
}

// stopCrashed waits for Run to return after its connection died under it;
// its error says so and is not checked.
func (r *running) stopCrashed(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		t.Logf("worker after the crash: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("worker did not stop")
	}
	r.done = nil
}

// stored waits until the store holds the deliveries final: at once with the
// SQLite ledger, and once the relay recorded the outcomes the senders
// reported with the JetStream ledger.
func (e *env) stored(ids ...string) {
	e.t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(testTimeout)
	for _, id := range ids {
		for e.delivery(id).State == store.DeliveryPending {
			select {
			case <-tick.C:
			case <-timeout:
				e.t.Fatalf("delivery %s: still pending in the store", id)
			}
		}
	}
}

// await returns once the message of delivery id was handled with outcome
// want (now or before), failing the test on timeout. Each event counts once.
func (r *running) await(t *testing.T, id string, want outcome) {
	t.Helper()
	if r.seen[settled{id, want}] > 0 {
		r.seen[settled{id, want}]--
		return
	}
	timeout := time.NewTimer(testTimeout)
	defer timeout.Stop()
	for {
		select {
		case ev := <-r.events:
			if ev.id == id && ev.o == want {
				return
			}
			r.seen[ev]++
		case <-timeout.C:
			t.Fatalf("delivery %s: no outcome %v in time", id, want)
		}
	}
}

// emailSender is a go-mail sender for the SMTP server at host:port.
func emailSender(t *testing.T, host string, port int) *email.Sender {
	t.Helper()
	s, err := email.New(email.Config{Host: host, Port: port, TLSPolicy: "none", From: "Herald <herald@example.com>",
		Timeout: 5 * time.Second, MaxIdle: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// countingSender counts the sends it passes on.
type countingSender struct {
	channels.Sender
	calls atomic.Int64
}

func (c *countingSender) Send(ctx context.Context, m channels.Message) (string, error) {
	c.calls.Add(1)
	return c.Sender.Send(ctx, m)
}

// gatedSender holds every send until release is closed, after telling
// entered which delivery it holds.
type gatedSender struct {
	channels.Sender
	entered chan string
	release chan struct{}
}

// gateEmail is an e-mail sender to peer behind a gate that tells up to
// entered sends it holds before one blocks.
func gateEmail(t *testing.T, peer *channeltest.SMTPServer, entered int) *gatedSender {
	return &gatedSender{Sender: emailSender(t, peer.Host(), peer.Port()), entered: make(chan string, entered),
		release: make(chan struct{})}
}

func (g *gatedSender) Send(ctx context.Context, m channels.Message) (string, error) {
	g.entered <- m.DeliveryID
	<-g.release
	return g.Sender.Send(ctx, m)
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// attachment writes a file into a temporary folder and returns it as an
// attachment of a payload.
func attachment(t *testing.T, name, contentType string, data []byte) store.Attachment {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return store.Attachment{Name: name, ContentType: contentType, Path: path}
}

// messageIDs counts the Message-IDs an SMTP server received.
func messageIDs(msgs []channeltest.Email) map[string]int {
	n := make(map[string]int, len(msgs))
	for _, m := range msgs {
		n[m.MessageID]++
	}
	return n
}

// pausingSender passes the first after sends on and holds every later one
// until release is closed, telling entered when the first is held.
type pausingSender struct {
	channels.Sender
	after   int64
	sends   atomic.Int64
	held    atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (p *pausingSender) Send(ctx context.Context, m channels.Message) (string, error) {
	if p.sends.Add(1) > p.after {
		p.held.Add(1)
		select {
		case p.entered <- struct{}{}:
		default:
		}
		<-p.release
	}
	return p.Sender.Send(ctx, m)
}

// awaitStreamEmpty waits until the delivery stream holds no message: every
// one was acknowledged or terminated.
func awaitStreamEmpty(t *testing.T, n *NATS) {
	t.Helper()
	ctx := awaitCtx(t)
	stream, err := n.JetStream().Stream(ctx, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("stream still holds %d messages", info.State.Msgs)
		}
	}
}
