package channeltest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
)

// holder keeps messages from being answered until a group of them is in, so
// that a test sees that many sends in flight at once.
type holder struct {
	mu    sync.Mutex
	group *group
}

// group is messages held until they are all in.
type group struct {
	left int           // messages still to come
	all  chan struct{} // closed when the last one came
}

// hold makes the next n messages wait for each other.
func (h *holder) hold(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.group = &group{left: n, all: make(chan struct{})}
}

// join adds a message to the group being held, if any, and waits for the
// rest of the group or until stop is closed.
func (h *holder) join(stop <-chan struct{}) {
	h.mu.Lock()
	g := h.group
	if g != nil {
		if g.left--; g.left == 0 {
			close(g.all)
			h.group = nil
		}
	}
	h.mu.Unlock()
	if g != nil {
		select {
		case <-g.all:
		case <-stop:
		}
	}
}

// HTTPGate is what an HTTP fake needs to show how a sender uses its
// connections: it counts the connections the server accepts and can hold
// requests until a group of them is in. A fake embeds it and starts its
// server with StartHTTP.
type HTTPGate struct {
	held  holder
	conns atomic.Int32
}

// StartHTTP starts an httptest server of h on 127.0.0.1 whose connections and
// requests pass through g, and closes it when the test ends.
func StartHTTP(t testing.TB, g *HTTPGate, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.held.join(r.Context().Done())
		h.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			g.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// HoldTogether makes the next n requests wait until all n have arrived, and
// then answers them: the test sees n sends in flight at once, each holding a
// connection of its own.
func (g *HTTPGate) HoldTogether(n int) { g.held.hold(n) }

// Connections is how many connections the server has accepted.
func (g *HTTPGate) Connections() int { return int(g.conns.Load()) }

// Gated is a peer that can hold sends together and count its connections.
type Gated interface {
	Peer
	HoldTogether(n int)
	Connections() int
}

// CheckConnectionsKept builds the kind's sender from set, as Herald does, and
// checks that it keeps a connection for each send it runs at once: after one
// send, three rounds of set's concurrency in sends at once, each held at peer
// until all are in, and peer must have accepted that many connections in all.
// The first send goes alone so that what a kind does once (a login) is not
// held with the rounds.
func CheckConnectionsKept(t *testing.T, d channels.Descriptor, set channels.Settings, peer Gated) {
	t.Helper()
	s, closeSender, err := d.NewSender(set, channels.Env{SendTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	if closeSender != nil {
		t.Cleanup(func() { _ = closeSender() })
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	send := func(id string) error {
		_, err := s.Send(ctx, channels.Message{DeliveryID: id, Channel: peer.Channel(),
			Subject: "Revenue alert", Text: "Revenue fell to 12.5"})
		return err
	}
	if err := send("kept-first"); err != nil {
		t.Fatalf("first Send: %v", err)
	}
	n := set.SendLimits().Concurrency
	for round := range 3 {
		peer.HoldTogether(n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs <- send(fmt.Sprintf("kept-%d-%d", round, i)) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: Send: %v", round, err)
			}
		}
		if got := peer.Connections(); got != n {
			t.Fatalf("after round %d of %d sends at once: the peer accepted %d connections, want %d", round, n, got, n)
		}
	}
}
