package worker

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/store"
)

// webhookSender is a webhook sender with the section's defaults that posts to
// loopback receivers.
func webhookSender(t *testing.T, sendTimeout time.Duration) *webhook.Sender {
	t.Helper()
	set := webhook.DefaultSettings()
	set.AllowNetworks = []string{"127.0.0.0/8"}
	s, err := webhook.New(set, channels.Env{SendTimeout: sendTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// webhookConfig is the kind configuration the app gives the webhook section's defaults.
func webhookConfig() KindConfig {
	l := webhook.DefaultSettings().SendLimits()
	return KindConfig{Concurrency: l.Concurrency, PerDestination: l.PerDestination, PerOwner: l.PerOwner}
}

// hookTo is a webhook channel posting to url.
func hookTo(url string) channels.Channel {
	return channels.Channel{Kind: webhook.Kind, Config: json.RawMessage(`{"url":` + strconv.Quote(url) + `}`), Secret: "s3cret"}
}

// receiver is a webhook receiver that answers each post with 200, or, while
// hang is set, holds it until release is called or the test ends; it counts
// the posts it holds at once.
type receiver struct {
	*httptest.Server
	hang     atomic.Bool
	inFlight atomic.Int64
	most     atomic.Int64
	posts    atomic.Int64
	release  func() // ends the posts held, and any later one at once
}

func newReceiver(t *testing.T, hang bool) *receiver {
	t.Helper()
	r := &receiver{}
	r.hang.Store(hang)
	release := make(chan struct{})
	r.release = sync.OnceFunc(func() { close(release) })
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.posts.Add(1)
		n := r.inFlight.Add(1)
		defer r.inFlight.Add(-1)
		for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
		}
		if r.hang.Load() {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	t.Cleanup(r.release) // runs first: the held posts end
	return r
}

// TestReceiversThatFailHoldOnlyTheirOwnersDeliveries: one owner's webhooks
// at receivers that refuse connections and at receivers that hang take no
// send slot of anyone else's; another owner's delivery to a working receiver
// is accepted at once. The refused deliveries wait for their destinations,
// charged no attempt, and no hanging receiver gets more posts at once than
// the per-destination cap.
func TestReceiversThatFailHoldOnlyTheirOwnersDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var dead []string
	var hanging []*receiver
	for range 4 {
		dead = append(dead, e.channel(hookTo("http://"+channeltest.ClosedPort(t)+"/hook")))
		r := newReceiver(t, true)
		hanging = append(hanging, r)
		dead = append(dead, e.channel(hookTo(r.URL+"/hook")))
	}
	var deadIDs []string
	for i := range 6 {
		_, ids := e.enqueue(store.Payload{Subject: "A's report " + strconv.Itoa(i), Text: "t"}, dead...)
		deadIDs = append(deadIDs, ids...)
	}
	working := newReceiver(t, false)
	other := e.addOwner("b")
	_, ids := e.enqueueTo(other, store.Payload{Subject: "B's alert", Text: "t"}, e.channelOf("b", hookTo(working.URL+"/hook")))

	cfg := testConfig()
	cfg.SendTimeout = 3 * time.Second // the hanging posts end with the test
	cfg.Kinds = map[channels.Kind]KindConfig{webhook.Kind: webhookConfig()}
	cfg.ProbeInterval, cfg.ProbeIntervalMax = time.Second, 5*time.Second
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{webhookSender(t, cfg.SendTimeout)}, cfg)
	t.Cleanup(func() { // before the worker stops, which waits for the sends in flight
		for _, h := range hanging {
			h.release()
		}
	})
	began := time.Now()
	r.relay.Notify()
	r.await(t, ids[0], outcomeSent)
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("the other owner's delivery was accepted %v after the handover, want within 2s", took)
	}
	for i, h := range hanging {
		if most := h.most.Load(); most > int64(webhookConfig().PerDestination) {
			t.Errorf("hanging receiver %d held %d posts at once, want at most %d", i, most, webhookConfig().PerDestination)
		}
	}
	for _, id := range deadIDs {
		if d := e.delivery(id); d.State != store.DeliveryPending || d.Attempts != 0 {
			t.Errorf("delivery %s to a failing receiver: %s after %d attempts, want pending after none (held)", id, d.State, d.Attempts)
		}
	}
}

// TestHeldDestinationIsReleasedTogether: deliveries held for a receiver that
// refused connections all go, charged one attempt each, once a probe finds
// it listening again.
func TestHeldDestinationIsReleasedTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	addr := channeltest.ClosedPort(t)
	ch := e.channel(hookTo("http://" + addr + "/hook"))
	var ids []string
	for i := range 20 {
		_, got := e.enqueue(store.Payload{Subject: "Report " + strconv.Itoa(i), Text: "t"}, ch)
		ids = append(ids, got...)
	}
	cfg := testConfig()
	cfg.Kinds = map[channels.Kind]KindConfig{webhook.Kind: webhookConfig()}
	cfg.ProbeInterval, cfg.ProbeIntervalMax = 10*time.Millisecond, 50*time.Millisecond
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{webhookSender(t, cfg.SendTimeout)}, cfg)
	r.relay.Notify()
	r.await(t, ids[0], outcomeHeld)

	var posts atomic.Int64
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the closed port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { posts.Add(1) })}
	var serving sync.WaitGroup
	serving.Go(func() { _ = srv.Serve(ln) })
	t.Cleanup(func() { srv.Close(); serving.Wait() })
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	for _, id := range ids {
		if d := e.delivery(id); d.State != store.DeliverySent || d.Attempts != 1 {
			t.Errorf("delivery %s: %s after %d attempts, want sent at the first", id, d.State, d.Attempts)
		}
	}
	if n := posts.Load(); n != int64(len(ids)) {
		t.Errorf("%d posts received, want %d", n, len(ids))
	}
}

// TestOwnersTakeTurns: one owner's burst handed over first delays another
// owner's delivery by no more than what the first owner may have in flight:
// the relay publishes the owners' deliveries in turn, MaxInFlightPerOwner of
// each at most, and the sender takes them round-robin by owner.
func TestOwnersTakeTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	ch := e.channel(peer.Channel())
	for i := range 40 {
		e.enqueue(store.Payload{Subject: "A " + strconv.Itoa(i), Text: "t"}, ch)
	}
	other := e.addOwner("v") // served after u1, the first owner, in the relay's turn
	_, ids := e.enqueueTo(other, store.Payload{Subject: "B", Text: "t"}, e.channelOf("v", peer.Channel()))
	cfg := testConfig()
	cfg.MaxInFlightPerOwner = 4
	// The sender holds little more than that: what the relay published
	// first is all it sees.
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Concurrency: 1, MaxPending: 5}}
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, cfg)
	r.relay.Notify()
	r.await(t, ids[0], outcomeSent)
	msgs, err := peer.Await(awaitCtx(t), 41)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.Subject == "B" {
			if i > cfg.MaxInFlightPerOwner {
				t.Errorf("the other owner's mail came %d of %d, want within the first %d", i+1, len(msgs), cfg.MaxInFlightPerOwner+1)
			}
			return
		}
	}
	t.Error("the other owner's mail never came")
}

// TestAnOwnersHeldWebhooksDoNotHoldItsMail: an owner's webhooks held for a
// receiver that refuses fill the owner's room in flight for webhooks, not
// for mail: the owner's mail handed over after them goes at once.
func TestAnOwnersHeldWebhooksDoNotHoldItsMail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dead := e.channel(hookTo("http://" + channeltest.ClosedPort(t) + "/hook"))
	for i := range 40 {
		e.enqueue(store.Payload{Subject: "Hook " + strconv.Itoa(i), Text: "t"}, dead)
	}
	peer := channeltest.NewSMTPServer(t)
	mail := e.channel(peer.Channel())
	cfg := testConfig()
	cfg.MaxInFlightPerOwner = 4
	cfg.Kinds = map[channels.Kind]KindConfig{webhook.Kind: webhookConfig()}
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{webhookSender(t, cfg.SendTimeout),
		emailSender(t, peer.Host(), peer.Port())}, cfg)
	r.relay.Notify()
	hooks := r.w.kinds[0].pool
	waitUntil(t, func() bool { held, _, _ := hooks.state(); return held == cfg.MaxInFlightPerOwner }, "the owner's room for webhooks full")
	_, ids := e.enqueue(store.Payload{Subject: "Mail", Text: "t"}, mail)
	r.relay.Notify()
	r.await(t, ids[0], outcomeSent)
}
