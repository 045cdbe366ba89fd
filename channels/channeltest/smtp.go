package channeltest

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/heraldhq/herald/channels"
)

// SMTPServer is an SMTP server on 127.0.0.1 that records every message it
// accepts and can be told to refuse the next ones with a given reply code.
type SMTPServer struct {
	srv    *smtp.Server
	ln     *trackingListener
	served chan struct{}
	done   chan struct{} // closed when Close starts
	user   string
	pass   string
	once   sync.Once

	mu        sync.Mutex
	msgs      inbox[Email]
	failN     int
	failCode  int
	deferCode int // every RCPT answered with it while set
	dropN     int
	sessions  int

	held holder
}

// SMTPOption configures an SMTPServer.
type SMTPOption func(*SMTPServer)

// WithSMTPAuth makes the server offer AUTH PLAIN (over plain TCP too) and
// refuse MAIL before a client authenticated as username with password.
func WithSMTPAuth(username, password string) SMTPOption {
	return func(s *SMTPServer) { s.user, s.pass = username, password }
}

// WithoutPipelining makes the server leave PIPELINING (RFC 2920) out of its
// EHLO reply, as an older relay does, so that a client sends it one command
// at a time.
func WithoutPipelining() SMTPOption {
	return func(s *SMTPServer) { s.ln.noPipelining = true }
}

// WithoutChunking makes the server leave CHUNKING (RFC 3030) out of its
// EHLO reply, as many relays do, so that a client sends the message after
// DATA, dot-stuffed.
func WithoutChunking() SMTPOption {
	return func(s *SMTPServer) { s.ln.noChunking = true }
}

// NewSMTPServer starts an SMTP server on 127.0.0.1 and closes it when the
// test ends.
func NewSMTPServer(t testing.TB, opts ...SMTPOption) *SMTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtp listen: %v", err)
	}
	s := &SMTPServer{
		ln:     &trackingListener{Listener: l, conns: make(map[*trackedConn]struct{})},
		served: make(chan struct{}),
		done:   make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = smtp.NewServer(smtp.BackendFunc(s.newSession))
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(s.ln)
	}()
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Addr is the server's host:port.
func (s *SMTPServer) Addr() string { return s.ln.Addr().String() }

// Host is the server's IP address.
func (s *SMTPServer) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }

// Port is the server's TCP port.
func (s *SMTPServer) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Messages returns the messages accepted so far, oldest first.
func (s *SMTPServer) Messages() []Email {
	return s.msgs.all()
}

// Await blocks until at least n messages were accepted, then returns them
// all, or returns ctx's error.
func (s *SMTPServer) Await(ctx context.Context, n int) ([]Email, error) {
	return s.msgs.await(ctx, n, "messages")
}

// FailNext makes the server answer the next n RCPT commands with code, a 4xx
// or 5xx SMTP reply code (451 and 550 are the usual ones).
func (s *SMTPServer) FailNext(n, code int) {
	if code < 400 || code > 599 {
		panic("channeltest: FailNext needs a 4xx or 5xx reply code, got " + strconv.Itoa(code))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failCode = n, code
}

// DropAfterNext makes the server accept the next n messages and then close
// each one's connection instead of reading the client's next command, as a
// relay does that takes one message per session, or that restarts.
func (s *SMTPServer) DropAfterNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropN = n
}

// takeDrop reports whether the message just accepted ends its session.
func (s *SMTPServer) takeDrop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return spend(&s.dropN)
}

// HoldTogether makes the next n messages wait, each once its content is read,
// until all n have arrived, and then accepts them together: the test sees n
// sends in flight at once, each holding a session of its own.
func (s *SMTPServer) HoldTogether(n int) { s.held.hold(n) }

// spend takes one from *n, what the script still calls for, and reports
// whether there was one; s.mu is held.
func spend(n *int) bool {
	if *n == 0 {
		return false
	}
	*n--
	return true
}

// Sessions is how many SMTP sessions (connections that said EHLO) the server
// has seen.
func (s *SMTPServer) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions
}

// Connections is Sessions: the server counts a connection once it said EHLO.
func (s *SMTPServer) Connections() int { return s.Sessions() }

// DropConnections closes every open client connection without a reply, as a
// relay does with sessions that idled too long; the server keeps listening.
func (s *SMTPServer) DropConnections() { s.ln.closeConns() }

// Close stops the server, drops open connections and waits for every
// goroutine it started. It is safe to call more than once.
func (s *SMTPServer) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		err = s.ln.Close()
		<-s.served
		s.ln.closeConns()
		// Shutdown waits for the connection handlers, whose connections are closed.
		_ = s.srv.Shutdown(context.Background())
	})
	return err
}

// Channel is an e-mail channel addressed to a mailbox this server accepts.
func (s *SMTPServer) Channel() channels.Channel {
	return channels.Channel{ID: "smtp-peer", Kind: "email", Config: config(map[string]string{"to": "alerts@example.com"})}
}

// Deliveries is Messages reduced to what every channel kind has; the key is
// the Message-ID.
func (s *SMTPServer) Deliveries() []Delivery {
	var ds []Delivery
	for _, m := range s.Messages() {
		ds = append(ds, Delivery{Key: m.MessageID, Subject: m.Subject, Text: m.Text})
	}
	return ds
}

// Fail answers the next n deliveries with 451 (Transient) or 550 (Permanent).
func (s *SMTPServer) Fail(n int, f Failure) {
	code := 451
	if f == Permanent {
		code = 550
	}
	s.FailNext(n, code)
}

func (s *SMTPServer) newSession(c *smtp.Conn) (smtp.Session, error) {
	s.mu.Lock()
	s.sessions++
	s.mu.Unlock()
	tc, _ := c.Conn().(*trackedConn)
	return &smtpSession{srv: s, conn: tc, authed: s.user == ""}, nil
}

// DeferAll makes the server answer every RCPT with code, a 4xx reply code,
// as a relay that defers everything does, until DeferAll(0).
func (s *SMTPServer) DeferAll(code int) {
	if code != 0 && (code < 400 || code > 499) {
		panic("channeltest: DeferAll needs a 4xx reply code or 0, got " + strconv.Itoa(code))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deferCode = code
}

// scripted returns the reply the script calls for now, if any.
func (s *SMTPServer) scripted() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	code := s.deferCode
	if code == 0 {
		if !spend(&s.failN) {
			return nil
		}
		code = s.failCode
	}
	class := code / 100
	msg := "Requested action not taken: try again later"
	if class == 5 {
		msg = "Requested action not taken: mailbox unavailable"
	}
	return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{class, 0, 0}, Message: msg}
}

func (s *SMTPServer) record(m Email) {
	s.msgs.add(func(int) Email { return m })
}

type smtpSession struct {
	srv    *SMTPServer
	conn   *trackedConn
	authed bool
	from   string
	to     []string
}

func (ss *smtpSession) AuthMechanisms() []string {
	if ss.srv.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != ss.srv.user || password != ss.srv.pass {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.srv.scripted(); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := ParseEmail(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unparseable message: " + err.Error()}
	}
	ss.srv.held.join(ss.srv.done)
	m.MailFrom, m.RcptTo = ss.from, append([]string(nil), ss.to...)
	m.Received = time.Now()
	ss.srv.record(m)
	if ss.srv.takeDrop() && ss.conn != nil {
		ss.conn.dropOnRead.Store(true) // after the reply: the client reads it, then finds the session gone
	}
	return nil
}

func (ss *smtpSession) Reset() { ss.from, ss.to = "", nil }

func (ss *smtpSession) Logout() error { return nil }

// trackingListener remembers the connections it accepted so that Close can
// end them.
type trackingListener struct {
	net.Listener
	mu           sync.Mutex
	conns        map[*trackedConn]struct{}
	noPipelining bool // WithoutPipelining
	noChunking   bool // WithoutChunking
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

func (l *trackingListener) closeConns() {
	l.mu.Lock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

type trackedConn struct {
	net.Conn
	l          *trackingListener
	dropOnRead atomic.Bool // close instead of reading the next command
}

func (c *trackedConn) Read(p []byte) (int, error) {
	if c.dropOnRead.Load() {
		_ = c.Close()
		return 0, io.EOF
	}
	return c.Conn.Read(p)
}

// pipeliningLine and chunkingLine are the lines of the server's EHLO reply
// that offer PIPELINING and CHUNKING: go-smtp writes each line of a reply on
// its own, and SIZE last.
var (
	pipeliningLine = regexp.MustCompile(`^250-(\d\.\d\.\d )?PIPELINING\r\n$`)
	chunkingLine   = regexp.MustCompile(`^250-(\d\.\d\.\d )?CHUNKING\r\n$`)
)

func (c *trackedConn) Write(p []byte) (int, error) {
	if c.l.noPipelining && pipeliningLine.Match(p) || c.l.noChunking && chunkingLine.Match(p) {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	err := c.Conn.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
