package worker

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// outage is one way a relay takes nothing for a while.
type outage struct {
	name       string
	begin, end func(t *testing.T, r *relayUnderTest)
}

// relayUnderTest is an SMTP server behind a proxy that can refuse or hang.
type relayUnderTest struct {
	peer  *channeltest.SMTPServer
	proxy *channeltest.TCPProxy
}

var outages = []outage{
	{"refusing", func(_ *testing.T, r *relayUnderTest) { r.proxy.Down() }, func(t *testing.T, r *relayUnderTest) { r.proxy.Up(t) }},
	{"hanging", func(_ *testing.T, r *relayUnderTest) { r.proxy.Hang(true) }, func(_ *testing.T, r *relayUnderTest) { r.proxy.Hang(false) }},
	{"deferring", func(_ *testing.T, r *relayUnderTest) { r.peer.DeferAll(451) }, func(_ *testing.T, r *relayUnderTest) { r.peer.DeferAll(0) }},
}

// drillRuns is how many times each outage is drilled: HERALD_DRILL_RUNS, 1
// by default.
func drillRuns(t *testing.T) int {
	n, err := strconv.Atoi(os.Getenv("HERALD_DRILL_RUNS"))
	if err != nil || n < 1 {
		return 1
	}
	t.Logf("%d runs of each outage", n)
	return n
}

// TestNoDuplicateThroughARelayOutage: a relay that refuses connections, one
// that takes them and never greets, and one that answers 451 to every mail,
// each for longer than three ack waits, while a sender holds deliveries for
// it: every mail arrives once when the relay is back, none charged more than
// two attempts, and JetStream hands no message out again, since the sender
// holds each from the moment it fetched it. Some deliveries have a second
// copy in the stream (as after a redelivery): the copy is claimed with its
// send slot, after the first copy's outcome is in the ledger, and is not sent.
func TestNoDuplicateThroughARelayOutage(t *testing.T) {
	t.Parallel()
	runs := drillRuns(t)
	for _, o := range outages {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			for run := range runs {
				drill(t, o, run)
			}
		})
	}
}

// drill delivers 60 mails through one outage.
func drill(t *testing.T, o outage, run int) {
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	relay := &relayUnderTest{peer: peer, proxy: channeltest.NewTCPProxy(t, peer.Addr())}
	var chs []string
	for i := range 10 {
		chs = append(chs, e.channel(mailTo(fmt.Sprintf("team%d@example.com", i))))
	}
	var ids []string
	for i := range 6 {
		_, got := e.enqueue(store.Payload{Subject: fmt.Sprintf("Report %d of run %d", i, run), Text: "t"}, chs...)
		ids = append(ids, got...)
	}
	cfg := testConfig()
	cfg.AckWait, cfg.SendTimeout = time.Second, time.Second
	cfg.ProbeInterval, cfg.ProbeIntervalMax = 50*time.Millisecond, 200*time.Millisecond
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Concurrency: 4}}
	o.begin(t, relay)
	n := startNATS(t, t.TempDir())
	reg := prometheus.NewRegistry()
	beats := make(chan struct{}, 64)
	r := e.startWith(n, []channels.Sender{emailSender(t, "127.0.0.1", relay.proxy.Port())}, cfg,
		Options{Registerer: reg, onHeartbeat: func() { beats <- struct{}{} }})
	<-r.idle // the stream exists
	// A second copy of three, without a message id, as JetStream stores a
	// delivery published again.
	for _, id := range ids[:3] {
		if _, err := n.JetStream().Publish(context.Background(), subject("email"), e.envelope(n, id)); err != nil {
			t.Fatal(err)
		}
	}
	r.relay.Notify()
	// The outage lasts past three of the NATS server's ack waits, in its
	// real time: ten of the sender's heartbeats, each a third of one.
	for range 10 {
		select {
		case <-beats:
		case <-time.After(testTimeout):
			t.Fatal("no heartbeat")
		}
	}
	o.end(t, relay)
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	awaitStreamEmpty(t, n)
	r.stop(t)
	received := messageIDs(peer.Messages())
	if len(received) != len(ids) {
		t.Errorf("%d distinct mails received, want %d", len(received), len(ids))
	}
	for id, count := range received {
		if count != 1 {
			t.Errorf("Message-ID %s received %d times", id, count)
		}
	}
	for _, id := range ids {
		if d := e.delivery(id); d.State != store.DeliverySent || d.Attempts > 2 {
			t.Errorf("delivery %s: %s after %d attempts, want sent after at most 2", id, d.State, d.Attempts)
		}
	}
	if got := counter(t, reg, "herald_worker_redelivered_total"); got != 0 {
		t.Errorf("JetStream handed %v messages out again while the sender held them", got)
	}
}

// counter sums the series of the counter named name that reg holds.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestTwoWorkersHoldPastTheAckWait: two live senders share the deliveries of
// a relay that refuses connections for longer than three ack waits. Each
// holds what it fetched, so JetStream hands nothing to the other, and every
// mail arrives once when the relay is back.
func TestTwoWorkersHoldPastTheAckWait(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, LedgerJetStream)
	peer := channeltest.NewSMTPServer(t)
	proxy := channeltest.NewTCPProxy(t, peer.Addr())
	var chs []string
	for i := range 10 {
		chs = append(chs, e.channel(mailTo(fmt.Sprintf("team%d@example.com", i))))
	}
	var ids []string
	for i := range 6 {
		_, got := e.enqueue(store.Payload{Subject: fmt.Sprintf("Report %d", i), Text: "t"}, chs...)
		ids = append(ids, got...)
	}
	cfg := testConfig()
	cfg.AckWait, cfg.SendTimeout = time.Second, time.Second
	cfg.ProbeInterval, cfg.ProbeIntervalMax = 50*time.Millisecond, 200*time.Millisecond
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Concurrency: 4, MaxPending: 40}} // neither fetches all
	proxy.Down()
	n := startNATS(t, t.TempDir())
	regs := [2]*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	beats := make(chan struct{}, 64)
	r := e.startWith(n, []channels.Sender{emailSender(t, "127.0.0.1", proxy.Port())}, cfg,
		Options{Registerer: regs[0], onHeartbeat: func() { beats <- struct{}{} }})
	e.secondWorker(n, r, []channels.Sender{emailSender(t, "127.0.0.1", proxy.Port())}, cfg, Options{Registerer: regs[1]})
	r.relay.Notify()
	for range 10 { // past three ack waits of the NATS server, in its real time
		select {
		case <-beats:
		case <-time.After(testTimeout):
			t.Fatal("no heartbeat")
		}
	}
	proxy.Up(t)
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	received := messageIDs(peer.Messages())
	if len(received) != len(ids) {
		t.Errorf("%d distinct mails received, want %d", len(received), len(ids))
	}
	for id, count := range received {
		if count != 1 {
			t.Errorf("Message-ID %s received %d times", id, count)
		}
	}
	for i, reg := range regs {
		if got := counter(t, reg, "herald_worker_redelivered_total"); got != 0 {
			t.Errorf("worker %d: JetStream handed it %v messages another live worker held", i+1, got)
		}
	}
}

// secondWorker runs another sender with a JetStream ledger of its own beside
// r's, reporting its outcomes to r, until the test ends.
func (e *env) secondWorker(n *NATS, r *running, senders []channels.Sender, cfg Config, opt Options) {
	e.t.Helper()
	cfg.Ledger = LedgerJetStream
	kv, err := NewKVLedger(context.Background(), n.JetStream(), KVLedgerConfig{Owner: rand.Text(), Lease: cfg.AckWait,
		Logger: testLogger(e.t)})
	if err != nil {
		e.t.Fatal(err)
	}
	opt.Logger = testLogger(e.t)
	w, err := New(n.JetStream(), kv, e.files(n), e.deliveryBox, senders, cfg, opt)
	if err != nil {
		e.t.Fatal(err)
	}
	w.onSettle = func(id string, o outcome) { r.events <- settled{id, o} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := stopped(ctx, <-done); err != nil {
			e.t.Errorf("second worker: %v", err)
		}
	})
}

// TestHandedBackGoesAtOnceAfterARestart: a sender that stops holding
// deliveries for a relay that refuses hands them back, and a sender started
// on the same server after a clean restart sends them at once, not after the
// ack wait.
func TestHandedBackGoesAtOnceAfterARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	proxy := channeltest.NewTCPProxy(t, peer.Addr())
	ch := e.channel(peer.Channel())
	var ids []string
	for i := range 20 {
		_, got := e.enqueue(store.Payload{Subject: fmt.Sprintf("Report %d", i), Text: "t"}, ch)
		ids = append(ids, got...)
	}
	cfg := testConfig()
	cfg.AckWait = 10 * time.Second
	cfg.ProbeInterval, cfg.ProbeIntervalMax = 10*time.Millisecond, 50*time.Millisecond
	proxy.Down()
	dir := t.TempDir()
	first, err := StartEmbedded(dir, EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	a := e.start(first, []channels.Sender{emailSender(t, "127.0.0.1", proxy.Port())}, cfg)
	a.relay.Notify()
	waitUntil(t, func() bool { held, _, _ := a.w.kinds[0].pool.state(); return held == len(ids) }, "every delivery held")
	a.stop(t)
	first.Close()

	proxy.Up(t)
	second := startNATS(t, dir)
	began := time.Now()
	b := e.start(second, []channels.Sender{emailSender(t, "127.0.0.1", proxy.Port())}, cfg)
	for _, id := range ids {
		b.await(t, id, outcomeSent)
	}
	if took := time.Since(began); took > cfg.AckWait/2 {
		t.Errorf("the handed-back deliveries went %v after the restart, want at once (the ack wait is %v)", took, cfg.AckWait)
	}
}
