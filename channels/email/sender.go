package email

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
)

// DefaultMaxIdle is how many SMTP connections a Sender keeps open between
// sends when Config.MaxIdle is zero.
const DefaultMaxIdle = 4

// DefaultMaxIdleTime is how long an idle connection is kept when Config.MaxIdleTime is
// zero: below the 30 s after which many relays close a quiet session.
const DefaultMaxIdleTime = 20 * time.Second

// DefaultMaxAttachmentBytes is smtp.maxAttachmentBytes by default: many
// relays and mailboxes refuse mails much larger.
const DefaultMaxAttachmentBytes = 10 * channels.MiB

// Config configures a Sender.
type Config struct {
	Host      string
	Port      int    // 0: 587, or 25 with TLSPolicy "none"
	TLSPolicy string // "mandatory" (default), "opportunistic" or "none" (STARTTLS)
	Username  string // SMTP AUTH user; empty: no authentication
	Password  string // SMTP AUTH password; never logged
	From      string // sender address, e.g. "Herald <herald@example.com>"
	Timeout   time.Duration
	// MaxIdle is how many connections are kept open for the next sends;
	// 0 means DefaultMaxIdle and a negative value dials once per message.
	MaxIdle int
	// MaxIdleTime is how long a connection may stay idle and still be used: relays and
	// firewalls drop quiet connections without a word. 0 means DefaultMaxIdleTime.
	MaxIdleTime time.Duration
	// Clock is the clock for the Date header; nil means the real clock.
	Clock clock.Clock
	// MaxAttachmentBytes bounds a mail's files in total: beyond it they
	// travel as download links (channels.FitFiles). 0: no bound.
	MaxAttachmentBytes int64
	// dkim signs every message; nil signs none. Descriptor.NewSender sets it
	// from the smtp.dkim settings.
	dkim *dkimSigner
}

// Sender delivers messages to an SMTP relay. It is safe for concurrent use
// and keeps a few connections open between sends; Close closes them.
type Sender struct {
	client   *mail.Client
	compose  composer
	log      *slog.Logger
	maxIdle  int
	idleTime time.Duration
	timeout  time.Duration // a mail transaction's, from its MAIL to the answer to its data
	now      func() time.Time

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

var _ channels.Sender = (*Sender)(nil)

// conn is one SMTP session and the TCP connection under it, which is closed
// to interrupt a send whose context ends.
type conn struct {
	smtp *smtp.Client
	raw  net.Conn
	idle time.Time // when it was put back in the pool
}

func (c *conn) close() { _ = c.raw.Close() }

// New returns a Sender for the relay cfg describes.
func New(cfg Config, logger *slog.Logger) (*Sender, error) {
	if cfg.Host == "" {
		return nil, errors.New("email: no SMTP host (use NewOutbox to write files instead)")
	}
	policy, err := tlsPolicy(cfg.TLSPolicy)
	if err != nil {
		return nil, err
	}
	comp, err := newComposer(cfg.From, clock.Or(cfg.Clock).Now, cfg.dkim)
	if err != nil {
		return nil, fmt.Errorf("email: %w", err)
	}
	comp.maxFiles = cfg.MaxAttachmentBytes
	port := cfg.Port
	if port == 0 {
		port = mail.DefaultPortTLS
		if policy == mail.NoTLS {
			port = mail.DefaultPort
		}
	}
	var dialer net.Dialer
	opts := []mail.Option{
		mail.WithPort(port),
		mail.WithTLSPolicy(policy),
		mail.WithDialContextFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if slot, ok := ctx.Value(dialSlotKey{}).(*dialSlot); ok && err == nil {
				slot.set(c)
			}
			return c, err
		}),
	}
	timeout := mail.DefaultTimeout
	if cfg.Timeout > 0 {
		timeout = cfg.Timeout
		opts = append(opts, mail.WithTimeout(cfg.Timeout))
	}
	if cfg.Username != "" {
		opts = append(opts,
			mail.WithOpportunisticSMTPAuth(mail.SMTPAuthSCRAMSHA256, mail.SMTPAuthPlain, mail.SMTPAuthLogin),
			mail.WithUsername(cfg.Username), mail.WithPassword(cfg.Password))
	}
	client, err := mail.NewClient(cfg.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("email: smtp client: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	maxIdle := cfg.MaxIdle
	if maxIdle == 0 {
		maxIdle = DefaultMaxIdle
	}
	idleTime := cfg.MaxIdleTime
	if idleTime <= 0 {
		idleTime = DefaultMaxIdleTime
	}
	return &Sender{client: client, compose: comp, log: logger, maxIdle: max(maxIdle, 0), idleTime: idleTime,
		timeout: timeout, now: clock.Or(cfg.Clock).Now}, nil
}

func tlsPolicy(s string) (mail.TLSPolicy, error) {
	switch s {
	case "", "mandatory":
		return mail.TLSMandatory, nil
	case "opportunistic":
		return mail.TLSOpportunistic, nil
	case "none":
		return mail.NoTLS, nil
	}
	return 0, fmt.Errorf("email: unknown TLS policy %q (want mandatory, opportunistic or none)", s)
}

// Kind is the e-mail kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Send delivers m to m.Channel.To and returns its Message-ID, angle brackets
// included. SMTP 5xx replies and unusable addresses or attachments are
// permanent errors; 4xx replies and network errors are not.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("send email: %w", err)
	}
	msg, err := s.compose.compose(m)
	if err != nil {
		return "", fmt.Errorf("compose email: %w", err)
	}
	if err := s.deliver(ctx, msg); err != nil {
		return "", fmt.Errorf("send email: %w", classify(err))
	}
	id := msg.GetMessageID()
	s.log.DebugContext(ctx, "email sent", "delivery", m.DeliveryID, "message_id", id)
	return id, nil
}

// deliver sends msg over an idle connection or a new one. A send on a reused
// connection that the relay closed meanwhile fails at its first command,
// before anything was sent: the connection is dropped and the send tried
// again, on the next idle one or a new one, without counting as an attempt.
// The pool is finite, so the retries are too.
func (s *Sender) deliver(ctx context.Context, msg *message) error {
	for {
		c, reused, err := s.get(ctx)
		if err != nil {
			return err
		}
		stop := context.AfterFunc(ctx, c.close)
		err = transact(c.smtp, msg, s.timeout)
		interrupted := !stop()
		switch {
		case err == nil && !interrupted:
			s.put(c)
			return nil
		case err == nil:
			c.close()
			return nil
		}
		if !interrupted && deferred(err) && c.smtp.Reset() == nil {
			// The relay answered, and the session is whole: the next mail
			// goes over it rather than over a new connection.
			s.put(c)
			return err
		}
		c.close()
		if interrupted {
			return ctx.Err()
		}
		if reused && closedBeforeSend(err) {
			continue
		}
		return err
	}
}

// deferred reports whether err is the relay's 4xx answer to one of the
// mail's commands (MAIL, RCPT, DATA or its end), other than 421, which
// closes the session: a deferral of this mail in a session that goes on
// (not one left reading the mail's data).
func deferred(err error) bool {
	var se *smtpError
	if !errors.As(err, &se) || se.step == stepConnection || se.dataOpen {
		return false
	}
	code := replyCode(se)
	return code >= 400 && code <= 499 && code != 421
}

// get returns an idle connection or dials a new one; connections idle for longer
// than the idle time are closed on the way. The context can end the handshake
// too: go-mail only watches it while dialing.
func (s *Sender) get(ctx context.Context) (c *conn, reused bool, err error) {
	var stale []*conn
	s.mu.Lock()
	for n := len(s.idle); n > 0 && c == nil; n-- {
		c = s.idle[n-1]
		s.idle = s.idle[:n-1]
		if s.now().Sub(c.idle) > s.idleTime {
			stale, c = append(stale, c), nil
		}
	}
	s.mu.Unlock()
	for _, sc := range stale {
		sc.close() // no QUIT: the session is likely gone, and waiting for it would delay the send
	}
	if c != nil {
		return c, true, nil
	}
	slot := &dialSlot{}
	stop := context.AfterFunc(ctx, slot.close)
	client, err := s.client.DialToSMTPClientWithContext(context.WithValue(ctx, dialSlotKey{}, slot))
	interrupted := !stop()
	switch {
	case interrupted:
		slot.close()
		return nil, false, fmt.Errorf("connect: %w", ctx.Err())
	case err != nil:
		slot.close()
		return nil, false, fmt.Errorf("connect: %w", err)
	}
	return &conn{smtp: client, raw: slot.conn}, false, nil
}

// dialSlotKey carries, in the dial context, the dialSlot that receives the
// new TCP connection.
type dialSlotKey struct{}

// dialSlot is where the dialer leaves the connection it made, so that it can
// be closed to interrupt the handshake and later sends.
type dialSlot struct {
	mu     sync.Mutex
	conn   net.Conn
	closed bool
}

func (d *dialSlot) set(c net.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conn = c
	if d.closed {
		_ = c.Close()
	}
}

func (d *dialSlot) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.conn != nil {
		_ = d.conn.Close()
	}
}

// put keeps c for the next send, or ends its session when enough are kept.
func (s *Sender) put(c *conn) {
	s.mu.Lock()
	if !s.closed && len(s.idle) < s.maxIdle {
		c.idle = s.now()
		s.idle = append(s.idle, c)
		c = nil
	}
	s.mu.Unlock()
	if c != nil {
		s.quit(c)
	}
}

func (s *Sender) quit(c *conn) {
	_ = s.client.CloseWithSMTPClient(c.smtp)
	c.close()
}

// Close ends the idle SMTP sessions. Sends after Close still work but keep
// no connection open.
func (s *Sender) Close() error {
	s.mu.Lock()
	idle := s.idle
	s.idle, s.closed = nil, true
	s.mu.Unlock()
	for _, c := range idle {
		s.quit(c)
	}
	return nil
}

// closedBeforeSend reports whether err says the connection was gone before
// the mail's first command got an answer: its deadline could not be set, or
// MAIL FROM failed without a reply (the connection was closed or reset) or
// with 421, the relay closing the session.
func closedBeforeSend(err error) bool {
	var se *smtpError
	if !errors.As(err, &se) {
		return false
	}
	switch se.step {
	case stepConnection:
		return true
	case stepMail:
		code := replyCode(se)
		return code == 0 || code == 421
	}
	return false
}

// classify marks the errors that no retry can cure as permanent: SMTP 5xx
// replies, to a command of the mail (MAIL, RCPT, DATA) or while connecting
// (AUTH). transact marks a mail without a usable sender or recipient
// permanent itself.
func classify(err error) error {
	if code := replyCode(err); code >= 500 && code <= 599 {
		return channels.Permanent(err)
	}
	return err
}
