package channels_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
)

// TestTransportKeepsAConnectionPerConcurrentRequest: rounds of conns requests
// in flight at once to one host open conns connections in all.
func TestTransportKeepsAConnectionPerConcurrentRequest(t *testing.T) {
	const conns = 8
	var opened atomic.Int32
	var mu sync.Mutex
	var waiting int
	var all chan struct{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Each request waits until the round's conns requests are all in.
		mu.Lock()
		if waiting++; waiting == conns {
			close(all)
		}
		round := all
		mu.Unlock()
		select {
		case <-round:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	client := &http.Client{Transport: channels.Transport(conns)}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for round := range 3 {
		mu.Lock()
		waiting, all = 0, make(chan struct{})
		mu.Unlock()
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for range conns {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body) // to the end, so the connection can be kept
					resp.Body.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if got := opened.Load(); got != conns {
			t.Fatalf("after round %d of %d requests at once: %d connections opened, want %d", round, conns, got, conns)
		}
	}
}
