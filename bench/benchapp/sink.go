package benchapp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/heraldhq/herald/bench/internal/distant"
	"github.com/heraldhq/herald/channels/channeltest"
)

// Sink is an SMTP server on 127.0.0.1 that accepts every message and
// remembers how often each Message-ID arrived.
type Sink struct {
	srv     *smtp.Server
	ln      net.Listener
	served  chan struct{}
	delay   time.Duration                      // before each message is answered
	latency time.Duration                      // each way, WithLatency
	parse   bool                               // parse each message whole
	body    func(textproto.MIMEHeader, []byte) // told of each message's body
	seen    func(textproto.MIMEHeader, time.Time)

	mu     sync.Mutex
	ids    map[string]int
	total  int
	bytes  int64 // of the messages' bodies after their headers
	target int
	done   chan struct{} // closed when total reaches target
}

// SinkOption adjusts a Sink.
type SinkOption func(*Sink)

// WithReplyDelay makes the sink answer each message d after it has read it,
// as a relay's latency: a sender's connection waits that long per message.
func WithReplyDelay(d time.Duration) SinkOption { return func(s *Sink) { s.delay = d } }

// WithLatency puts d between the sink and its clients each way, as a relay
// on another machine: a reply comes 2d after its command, and commands
// written together are read, and answered, together.
func WithLatency(d time.Duration) SinkOption { return func(s *Sink) { s.latency = d } }

// WithParse has the sink parse each message whole, MIME parts decoded, as a
// real relay reads what it takes, rather than only its headers: receiving
// then costs the CPU it costs a relay. A message that does not parse is
// refused.
func WithParse() SinkOption { return func(s *Sink) { s.parse = true } }

// WithBody has the sink tell see of each message's top-level headers and
// its body after them, as it came (MIME parts not decoded), before the
// message counts as accepted. body is valid only during the call: the sink
// reads each body into a buffer it uses again, so that reading them adds
// little garbage to the process measured.
func WithBody(see func(h textproto.MIMEHeader, body []byte)) SinkOption {
	return func(s *Sink) { s.body = see }
}

// WithSeen has the sink tell see of each message it accepted: its headers,
// and when it was accepted (answered).
func WithSeen(see func(h textproto.MIMEHeader, at time.Time)) SinkOption {
	return func(s *Sink) { s.seen = see }
}

// NewSink starts a sink; Done is closed once target messages arrived.
func NewSink(target int, opts ...SinkOption) (*Sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{ln: ln, served: make(chan struct{}), ids: make(map[string]int, min(target, 1<<20)), target: target, done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	var serve net.Listener = ln
	if s.latency > 0 {
		serve = distant.Listener(ln, s.latency)
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(serve)
	}()
	return s, nil
}

// Port is the sink's port on 127.0.0.1.
func (s *Sink) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Done is closed once the target number of messages arrived.
func (s *Sink) Done() <-chan struct{} { return s.done }

// Close stops the server.
func (s *Sink) Close() {
	_ = s.srv.Shutdown(context.Background())
	<-s.served
}

// Bytes is the size of the messages that arrived, without their top-level headers.
func (s *Sink) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// MeanBytes is the mean size of the messages that arrived, without their
// top-level headers.
func (s *Sink) MeanBytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.bytes / int64(max(s.total, 1)))
}

// Counts returns how many messages arrived and how many distinct Message-IDs.
func (s *Sink) Counts() (total, distinct int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, len(s.ids)
}

func (s *Sink) record(id string, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[id]++
	s.bytes += size
	s.total++
	if s.total == s.target {
		close(s.done)
	}
}

type sinkSession struct{ s *Sink }

// bodies are the buffers the sink reads bodies into for WithBody.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (*sinkSession) AuthMechanisms() []string             { return nil }
func (*sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (*sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (*sinkSession) Reset()                               {}
func (*sinkSession) Logout() error                        { return nil }
func (ss *sinkSession) Data(r io.Reader) error {
	if ss.s.parse {
		return ss.parsed(r)
	}
	br := bufio.NewReader(r)
	h, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		return err
	}
	var size int64
	if ss.s.body != nil {
		buf := bodies.Get().(*bytes.Buffer)
		defer bodies.Put(buf)
		buf.Reset()
		if size, err = buf.ReadFrom(br); err != nil {
			return err
		}
		ss.s.body(h, buf.Bytes())
	} else if size, err = io.Copy(io.Discard, br); err != nil {
		return err
	}
	id := strings.TrimSpace(h.Get("Message-Id"))
	if id == "" {
		return errors.New("no Message-ID")
	}
	if ss.s.delay > 0 {
		time.Sleep(ss.s.delay)
	}
	ss.s.record(id, size)
	if ss.s.seen != nil {
		ss.s.seen(h, time.Now())
	}
	return nil
}

// parsed takes a message as Data does, parsing it whole first.
func (ss *sinkSession) parsed(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := channeltest.ParseEmail(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unparseable message: " + err.Error()}
	}
	if m.MessageID == "" {
		return errors.New("no Message-ID")
	}
	if ss.s.delay > 0 {
		time.Sleep(ss.s.delay)
	}
	ss.s.record(strings.TrimSpace(m.MessageID), int64(len(raw)))
	if ss.s.seen != nil {
		ss.s.seen(textproto.MIMEHeader(m.Header), time.Now())
	}
	return nil
}
