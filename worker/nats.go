package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATS is a connection to a NATS server with JetStream and, when the server
// is embedded, the server itself.
type NATS struct {
	srv *server.Server // nil when the server is external
	nc  *nats.Conn
	js  jetstream.JetStream
	// heal, for an embedded server, brings JetStream back after the server
	// turned it off for want of space; nil for an external one.
	heal *healer
}

// EmbeddedConfig configures the in-process NATS server.
type EmbeddedConfig struct {
	// Listen is the host:port where other processes (sender nodes, the nats
	// CLI) can reach the server; port 0 picks a free one (see ClientURL).
	// Default empty: no listener, in-process clients only.
	Listen string
	// ReadyTimeout bounds how long start-up may take. Default 10s.
	ReadyTimeout time.Duration
	// Logger receives the connection's events (see connOptions) and the
	// server's log (see serverLog). Default: discarded.
	Logger *slog.Logger
	// HealEvery is how often JetStream, turned off by the server when its
	// storage ran out of space, is tried again. Default 2s.
	HealEvery time.Duration
}

// StartEmbedded starts a NATS server with JetStream in this process, keeping
// its file storage under dir, and connects to it in process.
func StartEmbedded(dir string, cfg EmbeddedConfig) (*NATS, error) {
	opts := &server.Options{
		ServerName: "herald",
		JetStream:  true,
		StoreDir:   dir,
		DontListen: true,
		NoSigs:     true,
	}
	if cfg.Listen != "" {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("nats listen address: %w", err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("nats listen port %q: %w", port, err)
		}
		if p == 0 {
			p = server.RANDOM_PORT
		}
		opts.Host, opts.Port, opts.DontListen = host, p, false
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var heal atomic.Pointer[healer] // the server logs from goroutines of its own
	srv.SetLogger(serverLog{log: log.With("component", "nats-server"), failed: func(msg string) {
		if h := heal.Load(); h != nil {
			h.writeFailed(msg)
		}
	}}, false, false)
	srv.Start()
	if !srv.ReadyForConnections(cfg.ReadyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, errors.New("nats server: not ready in time")
	}
	nc, err := nats.Connect("", append(connOptions(cfg.Logger), nats.InProcessServer(srv))...)
	if err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("nats connect: %w", err)
	}
	n, err := newNATS(srv, nc)
	if err != nil {
		return nil, err
	}
	n.heal = startHealer(srv, dir, log.With("component", "nats"), cfg.HealEvery)
	heal.Store(n.heal)
	return n, nil
}

// ExternalConfig configures the connection to an external NATS cluster.
type ExternalConfig struct {
	// URL lists the servers, comma-separated, e.g. "nats://nats-1:4222,nats://nats-2:4222".
	URL string
	// CredsFile is a user credentials file (JWT and NKey seed). Default none.
	CredsFile string
	// CAFile holds the certificates that sign the servers' TLS certificates.
	// Default: the system roots.
	CAFile string
	// CertFile and KeyFile are this client's TLS certificate and key, for
	// servers that verify clients. Default none.
	CertFile string
	KeyFile  string
	// Logger receives the connection's events (see connOptions). Default:
	// discarded.
	Logger *slog.Logger
}

// Connect connects to an external NATS server. The connection reconnects
// without limit when servers go away.
func Connect(cfg ExternalConfig) (*NATS, error) {
	if cfg.URL == "" {
		return nil, errors.New("nats: no URL")
	}
	opts := append(connOptions(cfg.Logger), nats.MaxReconnects(-1))
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("nats connect: %w", err)
	}
	return newNATS(nil, nc)
}

// connOptions names the connection and sends its asynchronous errors (a
// publish or subscription the server refused, a slow consumer) to log as
// warnings, and its losses and recoveries of the server as well, rather
// than the library's default of printing errors to stderr.
func connOptions(log *slog.Logger) []nats.Option {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "nats")
	return []nats.Option{
		nats.Name("herald"),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("nats error", "subject", sub.Subject, "err", err)
				return
			}
			log.Warn("nats error", "err", err)
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", "server", nc.ConnectedUrlRedacted()) }),
	}
}

func newNATS(srv *server.Server, nc *nats.Conn) (*NATS, error) {
	// An asynchronous publish that no server answers (its stream's leader
	// died with it) is given up after publishTimeout, rather than kept
	// pending for good, where it counts towards the publishes in flight
	// past which the client stalls.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishTimeout))
	if err != nil {
		nc.Close()
		if srv != nil {
			srv.Shutdown()
			srv.WaitForShutdown()
		}
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return &NATS{srv: srv, nc: nc, js: js}, nil
}

// JetStream is the JetStream context of the connection.
func (n *NATS) JetStream() jetstream.JetStream { return n.js }

// ClientURL is where other processes reach the embedded server, or "" when
// it does not listen or is external.
func (n *NATS) ClientURL() string {
	if n.srv == nil || n.srv.Addr() == nil {
		return ""
	}
	return n.srv.ClientURL()
}

// Close flushes what the connection has buffered, closes it without waiting
// for subscriptions to drain and, when the server is embedded, shuts the
// server down and waits until it has. Messages handed out and not yet
// acknowledged are delivered again later.
func (n *NATS) Close() {
	_ = n.nc.FlushTimeout(time.Second)
	n.nc.Close()
	if n.heal != nil {
		n.heal.stop()
	}
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
	}
}

// Check reports whether the connection to the NATS server is up and, when
// the server is embedded, whether its JetStream is on.
func (n *NATS) Check() error {
	if s := n.nc.Status(); s != nats.CONNECTED {
		return fmt.Errorf("nats connection %s", s)
	}
	if n.heal != nil {
		if why := n.heal.sick(); why != "" {
			return errors.New(why)
		}
	}
	return nil
}
