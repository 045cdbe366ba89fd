package httpserve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// served is a Server of a handler that records the request URIs it sees,
// on a loopback listener of Listen.
type served struct {
	addr string
	srv  *Server
	reg  *prometheus.Registry
	done chan error

	mu   sync.Mutex
	seen []string
}

func serve(t *testing.T, c Config) *served {
	t.Helper()
	s := &served{reg: prometheus.NewRegistry(), done: make(chan error, 1)}
	ln, err := Listen("127.0.0.1:0", c, s.reg)
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = New(c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.RequestURI)
		s.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}), slog.New(slog.DiscardHandler))
	go func() { s.done <- s.srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.srv.Shutdown(context.Background())
		<-s.done
	})
	return s
}

func (s *served) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// exchange sends raw on a new connection and returns the connection and
// the response read from it.
func (s *served) exchange(t *testing.T, raw string) (net.Conn, *http.Response) {
	t.Helper()
	return s.exchangeFrom(t, nil, raw)
}

// exchangeFrom is exchange from the local address from (nil: any).
func (s *served) exchangeFrom(t *testing.T, from net.Addr, raw string) (net.Conn, *http.Response) {
	t.Helper()
	c, err := (&net.Dialer{LocalAddr: from}).Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, resp
}

// TestShutdownClosesConnectionsThatSentNothing: a connection that never sent
// a request does not hold the shutdown for the 5 s net/http grants it.
func TestShutdownClosesConnectionsThatSentNothing(t *testing.T) {
	t.Parallel()
	s := serve(t, DefaultConfig())
	silent, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// Connections are accepted in order: once the second is answered, the
	// server holds the silent one.
	s.exchange(t, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v, want nil before the silent connection's 5 s", err)
	}
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve = %v, want http.ErrServerClosed", err)
	}
	s.done <- nil // for the cleanup
	if n, err := silent.Read(make([]byte, 1)); err == nil {
		t.Errorf("the silent connection read %d bytes, want it closed", n)
	}
}

// TestAnAmbiguousRequestIsRefusedBeforeTheHandler: a request that states its
// length two ways is answered 400 by the server, and the handler never sees it.
func TestAnAmbiguousRequestIsRefusedBeforeTheHandler(t *testing.T) {
	t.Parallel()
	s := serve(t, DefaultConfig())
	_, resp := s.exchange(t, "POST /smuggle HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", resp.StatusCode)
	}
	if got := s.requests(); len(got) != 0 {
		t.Errorf("the handler saw %v, want nothing", got)
	}
}

// TestEveryRequestReachesTheHandler: "OPTIONS *" too, not net/http's own
// answer, so that the framer and the server count requests alike.
func TestEveryRequestReachesTheHandler(t *testing.T) {
	t.Parallel()
	s := serve(t, DefaultConfig())
	s.exchange(t, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := s.requests(); len(got) != 1 || got[0] != "OPTIONS *" {
		t.Errorf("the handler saw %v, want [OPTIONS *]", got)
	}
}

// TestListenCapsTheConnectionsOfOneClient: past maxConnectionsPerClient a
// connection is closed at once and counted.
func TestListenCapsTheConnectionsOfOneClient(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.MaxConnectionsPerClient = 1
	s := serve(t, c)
	s.exchange(t, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n") // kept alive: the client's one connection
	second, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_, _ = io.WriteString(second, "GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
	if n, err := second.Read(make([]byte, 1)); err == nil {
		t.Errorf("the second connection read %d bytes, want it closed", n)
	}
	// Connections are accepted in order: once another client's is answered,
	// the refusal has been counted.
	s.exchangeFrom(t, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := refused(t, s.reg); got != 1 {
		t.Errorf("herald_http_connections_refused_total = %v, want 1", got)
	}
}

func refused(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "herald_http_connections_refused_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no herald_http_connections_refused_total")
	return 0
}

func TestListenNamesTheCertificateKey(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.TLSCert, c.TLSKey = filepath.Join(t.TempDir(), "none.pem"), filepath.Join(t.TempDir(), "none.key")
	_, err := Listen("127.0.0.1:0", c, prometheus.NewRegistry())
	if err == nil || !strings.HasPrefix(err.Error(), "http.tlsCert: ") {
		t.Errorf("err = %v, want one naming http.tlsCert", err)
	}
}

func TestNewTakesTheTimeouts(t *testing.T) {
	t.Parallel()
	c := Config{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second}
	srv := New(c, http.NotFoundHandler(), slog.New(slog.DiscardHandler)).srv
	if srv.ReadHeaderTimeout != c.ReadHeaderTimeout || srv.ReadTimeout != c.ReadTimeout || srv.WriteTimeout != c.WriteTimeout ||
		srv.IdleTimeout != c.IdleTimeout || !srv.DisableGeneralOptionsHandler || srv.ErrorLog == nil {
		t.Errorf("server = %+v", srv)
	}
}
