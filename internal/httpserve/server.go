package httpserve

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"golang.org/x/net/netutil"

	"github.com/heraldhq/herald/internal/httpguard"
)

// Listen binds addr: at most c.MaxConnections at once and
// c.MaxConnectionsPerClient from one client, TLS when a certificate is
// configured, and the framing of every connection's requests followed as
// they are read (httpguard.Framing), which needs the plain bytes, so TLS is
// ended here rather than by the http.Server, and connections speak HTTP/1.1.
// reg receives the count of connections refused for their client.
func Listen(addr string, c Config, reg prometheus.Registerer) (net.Listener, error) {
	var tlsCfg *tls.Config
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("http.tlsCert: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln = netutil.LimitListener(ln, c.MaxConnections)
	refused := promauto.With(reg).NewCounter(prometheus.CounterOpts{
		Name: "herald_http_connections_refused_total",
		Help: "Connections closed as soon as they were accepted: their client address held http.maxConnectionsPerClient.",
	})
	ln = httpguard.LimitPerClient(ln, c.MaxConnectionsPerClient, c.Proxies(), refused.Inc)
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	return httpguard.Framing(ln), nil
}

// Server serves h over a listener of Listen.
type Server struct {
	srv   *http.Server
	fresh freshConns
}

// New returns the server of h with c's timeouts; its errors go to log at Warn.
func New(c Config, h http.Handler, log *slog.Logger) *Server {
	s := &Server{fresh: freshConns{m: make(map[net.Conn]bool)}}
	s.srv = &http.Server{
		// Requests framed two ways are refused here, before the API and the
		// console; every request reaches this handler, "OPTIONS *" too, so
		// that the framer and the server count the requests alike.
		Handler:                      httpguard.RefuseAmbiguous(h, log),
		ConnContext:                  httpguard.ConnContext,
		DisableGeneralOptionsHandler: true,
		ReadHeaderTimeout:            c.ReadHeaderTimeout,
		ReadTimeout:                  c.ReadTimeout,
		WriteTimeout:                 c.WriteTimeout,
		IdleTimeout:                  c.IdleTimeout,
		ErrorLog:                     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState:                    s.fresh.track,
	}
	return s
}

// Serve serves the connections of ln until Shutdown; it then returns
// http.ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// Shutdown stops accepting, closes the connections that have not sent a
// request, and waits until the requests in flight are answered or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	// http.Server.Shutdown waits 5 s for connections that never sent a
	// request; they carry nothing, so close them now.
	s.srv.SetKeepAlivesEnabled(false)
	s.fresh.closeAll()
	return s.srv.Shutdown(ctx)
}

// freshConns tracks the server's connections that have not sent a request yet.
type freshConns struct {
	mu sync.Mutex
	m  map[net.Conn]bool
}

func (f *freshConns) track(c net.Conn, state http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if state == http.StateNew {
		f.m[c] = true
	} else {
		delete(f.m, c)
	}
}

func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.m {
		_ = c.Close()
	}
}
