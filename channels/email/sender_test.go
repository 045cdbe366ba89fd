package email_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/internal/clock"
)

const from = "Herald <herald@example.com>"

func newSender(t *testing.T, srv *channeltest.SMTPServer, logger *slog.Logger, mod ...func(*email.Config)) *email.Sender {
	t.Helper()
	cfg := email.Config{Host: srv.Host(), Port: srv.Port(), TLSPolicy: "none", From: from, Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	s, err := email.New(cfg, logger)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// relayModes are the ways a relay takes a mail, by what its EHLO offers.
var relayModes = map[string][]channeltest.SMTPOption{
	"BDAT":                  nil,
	"DATA pipelined":        {channeltest.WithoutChunking()},
	"one command at a time": {channeltest.WithoutPipelining()},
}

func TestConformance(t *testing.T) {
	t.Parallel()
	for name, opts := range relayModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			channeltest.RunConformance(t, func(t *testing.T, logger *slog.Logger) (channels.Sender, channeltest.Peer) {
				srv := channeltest.NewSMTPServer(t, opts...)
				return newSender(t, srv, logger), srv
			})
		})
	}
}

// TestLargeMailTravelsInChunks: a mail larger than a chunk, with lines that
// start with dots and lines of base64, arrives as it was written, whichever
// way the relay takes it.
func TestLargeMailTravelsInChunks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := make([]byte, 700_000) // about 950 KB of base64: four chunks
	for i := range big {
		big[i] = byte(i * 31)
	}
	path := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, opts := range relayModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := channeltest.NewSMTPServer(t, opts...)
			s := newSender(t, srv, nil)
			m := message("big")
			m.Text = ".a line with a dot\n..two\n.\nend\n"
			m.Attachments = []channels.Attachment{{Name: "data.bin", Path: path}}
			if _, err := s.Send(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Send(t.Context(), message("after")); err != nil {
				t.Fatalf("the mail after a large one: %v", err)
			}
			msgs := srv.Messages()
			if len(msgs) != 2 || srv.Sessions() != 1 {
				t.Fatalf("%d mails in %d sessions, want 2 in 1", len(msgs), srv.Sessions())
			}
			e := msgs[0]
			if e.Text != m.Text || len(e.Attachments) != 1 || !bytes.Equal(e.Attachments[0].Data, big) {
				t.Fatalf("text %q, %d files; the file arrived whole: %v", e.Text, len(e.Attachments),
					len(e.Attachments) == 1 && bytes.Equal(e.Attachments[0].Data, big))
			}
		})
	}
}

func message(id string) channels.Message {
	return channels.Message{
		DeliveryID: id,
		Channel:    channels.Channel{ID: "c1", Kind: email.Kind, Config: []byte(`{"to":"ops@example.com"}`)},
		Subject:    "Revenue alert",
		Text:       "Revenue fell to 12.",
	}
}

func TestSendClassifiesReplies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		code      int
		permanent bool
	}{
		{"greylisted 451", 451, false},
		{"insufficient storage 452", 452, false},
		{"service unavailable 421", 421, false},
		{"mailbox unavailable 550", 550, true},
		{"user not local 551", 551, true},
		{"exceeded storage 552", 552, true},
		{"transaction failed 554", 554, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewSMTPServer(t)
			s := newSender(t, srv, nil)
			srv.FailNext(1, tc.code)
			_, err := s.Send(t.Context(), message("d1"))
			if err == nil {
				t.Fatal("Send succeeded through a refusal")
			}
			if got := channels.IsPermanent(err); got != tc.permanent {
				t.Fatalf("IsPermanent = %v, want %v (err: %v)", got, tc.permanent, err)
			}
			if !strings.Contains(err.Error(), "d1@example.com") && !strings.Contains(err.Error(), "ops@example.com") {
				t.Errorf("error does not say which message failed: %v", err)
			}
			if _, err := s.Send(t.Context(), message("d1")); err != nil {
				t.Fatalf("send after the refusal: %v", err)
			}
		})
	}
}

func TestSendBuildsMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := []byte("\"Region\",\"Revenue\"\n\"EU\",\"12\"\n")
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff, 0xfe}
	writeFile(t, filepath.Join(dir, "r.csv"), csv)
	writeFile(t, filepath.Join(dir, "chart.bin"), png)
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	srv := channeltest.NewSMTPServer(t)
	s := newSender(t, srv, nil, func(c *email.Config) { c.Clock = clock.NowFrom(func() time.Time { return at }) })

	m := message("sub-1.2026-03-01T08-00-00Z.c1")
	m.Subject = "Tržby klesly — €12"
	m.Text = "Revenue fell.\nSee the attached report."
	m.HTML = "<p>Revenue <b>fell</b>.</p>"
	m.Attachments = []channels.Attachment{
		{Name: "Revenue report.csv", ContentType: "text/csv", Path: filepath.Join(dir, "r.csv")},
		{Name: "chart.png", ContentType: "image/png", Path: filepath.Join(dir, "chart.bin")},
	}
	id, err := s.Send(t.Context(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	want := "<sub-1.2026-03-01T08-00-00Z.c1@example.com>"
	if id != want {
		t.Errorf("provider id = %q, want %q", id, want)
	}
	got := srv.Messages()
	if len(got) != 1 {
		t.Fatalf("server has %d messages, want 1", len(got))
	}
	e := got[0]
	checks := []struct{ name, got, want string }{
		{"Message-ID", e.MessageID, want},
		{"Subject", e.Subject, m.Subject},
		{"Text", strings.TrimRight(e.Text, "\n"), m.Text},
		{"HTML holds the body", strconv.FormatBool(strings.Contains(e.HTML, m.HTML)), "true"},
		{"From", e.From, "herald@example.com"},
		{"envelope from", e.MailFrom, "herald@example.com"},
		{"To", strings.Join(e.To, ","), "ops@example.com"},
		{"envelope to", strings.Join(e.RcptTo, ","), "ops@example.com"},
		{"Date", e.Date.UTC().Format(time.RFC3339), at.Format(time.RFC3339)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(e.Attachments) != 2 {
		t.Fatalf("%d attachments, want 2", len(e.Attachments))
	}
	for i, w := range []struct {
		name, ctype string
		data        []byte
	}{{"Revenue report.csv", "text/csv", csv}, {"chart.png", "image/png", png}} {
		a := e.Attachments[i]
		if a.Name != w.name || a.ContentType != w.ctype || !bytes.Equal(a.Data, w.data) {
			t.Errorf("attachment %d = %q %q %q, want %q %q %q", i, a.Name, a.ContentType, a.Data, w.name, w.ctype, w.data)
		}
	}
}

// TestLinesOfDotsArriveAsWritten: a line of a single dot, or starting with
// one, in a mail's text and HTML ends neither the mail nor its line: the
// relay receives one mail holding every line as written, and the next mail
// on the same connection is a mail of its own.
func TestLinesOfDotsArriveAsWritten(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	s := newSender(t, srv, nil)
	m := message("d-dots")
	m.Text = "Revenue fell.\n.\n..\n.hidden\nMAIL FROM:<x@example.com>\n.\nend"
	m.HTML = "<pre>\n.\n.class { }\n</pre>"
	if _, err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, err := s.Send(t.Context(), message("d-next")); err != nil {
		t.Fatalf("the next Send: %v", err)
	}
	got := srv.Messages()
	if len(got) != 2 {
		t.Fatalf("server has %d messages, want 2", len(got))
	}
	if text := strings.TrimRight(got[0].Text, "\n"); text != m.Text {
		t.Errorf("text = %q, want %q", text, m.Text)
	}
	if !strings.Contains(got[0].HTML, m.HTML) {
		t.Errorf("HTML = %q, want it to hold %q", got[0].HTML, m.HTML)
	}
	if strings.TrimRight(got[1].Text, "\n") != message("d-next").Text {
		t.Errorf("the next mail's text = %q", got[1].Text)
	}
}

func TestMessageIDSurvivesRestart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, delivery string
		readable       bool // the delivery id shows in the Message-ID as it is
	}{
		{"plain id", "sub-7.1767254400.ch-3", true},
		{"id with space and colon", "sub 7/ch:3", false},
		{"dots only", "..", false},
		{"long id", strings.Repeat("x", 300), false},
	}
	srv := channeltest.NewSMTPServer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Two senders stand for the process before and after a crash.
			first, err := newSender(t, srv, nil).Send(t.Context(), message(tc.delivery))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			second, err := newSender(t, srv, nil).Send(t.Context(), message(tc.delivery))
			if err != nil {
				t.Fatalf("Send again: %v", err)
			}
			if first != second {
				t.Errorf("one delivery got Message-IDs %q and %q", first, second)
			}
			if got := strings.Contains(first, tc.delivery); got != tc.readable {
				t.Errorf("Message-ID %q shows the delivery id: %v, want %v", first, got, tc.readable)
			}
			if _, err := netMailAddr(first); err != nil {
				t.Errorf("Message-ID %q is not dot-atom@domain: %v", first, err)
			}
		})
	}
	if _, err := newSender(t, srv, nil).Send(t.Context(), message("")); !channels.IsPermanent(err) {
		t.Errorf("a message without delivery id gave %v, want a permanent error", err)
	}
}

func TestSendAuthenticates(t *testing.T) {
	t.Parallel()
	const user, pass = "relay-user", "relay-secret-XYZ"
	cases := []struct {
		name      string
		password  string
		wantErr   bool
		permanent bool
		delivered int
	}{
		{"right password", pass, false, false, 1},
		{"wrong password", "wrong-secret-ABC", true, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewSMTPServer(t, channeltest.WithSMTPAuth(user, pass))
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			s := newSender(t, srv, logger, func(c *email.Config) { c.Username, c.Password = user, tc.password })
			_, err := s.Send(t.Context(), message("d1"))
			if (err != nil) != tc.wantErr || channels.IsPermanent(err) != tc.permanent {
				t.Fatalf("Send error = %v, want error %v permanent %v", err, tc.wantErr, tc.permanent)
			}
			if err != nil && strings.Contains(err.Error(), tc.password) {
				t.Errorf("error reveals the SMTP password: %v", err)
			}
			if strings.Contains(logs.String(), tc.password) {
				t.Errorf("log reveals the SMTP password:\n%s", logs.String())
			}
			if got := len(srv.Messages()); got != tc.delivered {
				t.Errorf("server has %d messages, want %d", got, tc.delivered)
			}
		})
	}
}

func TestSendReusesConnections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		maxIdle  int
		sessions int
	}{
		{"default pool", 0, 1},
		{"no pool", -1, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewSMTPServer(t)
			s := newSender(t, srv, nil, func(c *email.Config) { c.MaxIdle = tc.maxIdle })
			for _, id := range []string{"a", "b", "c"} {
				if _, err := s.Send(t.Context(), message(id)); err != nil {
					t.Fatalf("Send(%s): %v", id, err)
				}
			}
			if got := srv.Sessions(); got != tc.sessions {
				t.Fatalf("server saw %d sessions, want %d", got, tc.sessions)
			}
		})
	}
}

// TestDeferralKeepsTheSession: a relay that defers mails (451 to RCPT, as
// one short of resources or greylisting does) keeps the session in step,
// whether it takes the mail in BDAT chunks pipelined behind MAIL and RCPT,
// after a pipelined DATA, or one command at a time: the sender resets it
// and sends the next mails over it, not over a new connection each.
func TestDeferralKeepsTheSession(t *testing.T) {
	t.Parallel()
	for name, opts := range relayModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := channeltest.NewSMTPServer(t, opts...)
			s := newSender(t, srv, nil)
			srv.DeferAll(451)
			for _, id := range []string{"a", "b", "c"} {
				if _, err := s.Send(t.Context(), message(id)); err == nil || channels.IsPermanent(err) {
					t.Fatalf("Send(%s) to a relay deferring everything: %v, want a transient error", id, err)
				}
			}
			srv.DeferAll(0)
			if _, err := s.Send(t.Context(), message("d")); err != nil {
				t.Fatalf("Send after the deferrals: %v", err)
			}
			srv.FailNext(1, 550)
			if _, err := s.Send(t.Context(), message("e")); !channels.IsPermanent(err) {
				t.Fatalf("Send to a refused recipient: %v, want a permanent error", err)
			}
			if _, err := s.Send(t.Context(), message("f")); err != nil {
				t.Fatalf("Send after the refusal: %v", err)
			}
			if got := srv.Sessions(); got != 2 {
				t.Fatalf("server saw %d sessions, want 2 (one more after the refusal)", got)
			}
			if msgs := srv.Messages(); len(msgs) != 2 {
				t.Fatalf("server accepted %d mails, want 2", len(msgs))
			}
		})
	}
}

// TestSenderKeepsAConnectionPerConcurrentSend: the smtp section's sender
// keeps as many sessions open between sends as the kind runs sends at once.
func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	set := email.DefaultSettings()
	set.Host, set.Port, set.TLSPolicy = srv.Host(), srv.Port(), "none"
	channeltest.CheckConnectionsKept(t, email.Descriptor, set, srv)
}

func TestSendConcurrently(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	s := newSender(t, srv, nil)
	const n = 12
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.Send(t.Context(), message(fmt.Sprint("d", i)))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if got := len(srv.Messages()); got != n {
		t.Fatalf("server has %d messages, want %d", got, n)
	}
	if got := srv.Sessions(); got > n {
		t.Fatalf("%d sessions for %d messages", got, n)
	}
}

// TestSendGoesOverANewSessionWhenTheRelayEndedOne: the relay drops the
// pooled connection while it is idle, or closes the session right after
// accepting a mail. The mail it accepted is sent (reporting an error would
// have it sent again), and the next send finds the session gone before it
// sent anything and goes over a new one.
func TestSendGoesOverANewSessionWhenTheRelayEndedOne(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		before, after func(*channeltest.SMTPServer) // around the first send
	}{
		{"dropped while idle", func(*channeltest.SMTPServer) {}, (*channeltest.SMTPServer).DropConnections},
		{"closed after accepting", func(srv *channeltest.SMTPServer) { srv.DropAfterNext(1) }, func(*channeltest.SMTPServer) {}},
	}
	// A large mail takes many writes: the first may go into the closed
	// connection unnoticed, the next fail.
	large := message("b")
	large.Attachments = []channels.Attachment{{Name: "data.bin", Path: filepath.Join(t.TempDir(), "data.bin")}}
	if err := os.WriteFile(large.Attachments[0].Path, bytes.Repeat([]byte("0123456789"), 50_000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for size, second := range map[string]channels.Message{"small": message("b"), "large": large} {
			t.Run(c.name+"/"+size, func(t *testing.T) {
				srv := channeltest.NewSMTPServer(t)
				s := newSender(t, srv, nil)
				c.before(srv)
				if _, err := s.Send(t.Context(), message("a")); err != nil {
					t.Fatalf("first Send, which the relay accepted: %v", err)
				}
				c.after(srv)
				if _, err := s.Send(t.Context(), second); err != nil {
					t.Fatalf("Send after the relay ended the session: %v", err)
				}
				if got := len(srv.Messages()); got != 2 {
					t.Fatalf("server has %d messages, want 2", got)
				}
				if got := srv.Sessions(); got != 2 {
					t.Fatalf("server saw %d sessions, want 2", got)
				}
			})
		}
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	s := newSender(t, srv, nil)
	dir := t.TempDir()
	cases := []struct {
		name string
		edit func(*channels.Message)
	}{
		{"invalid recipient", func(m *channels.Message) { m.Channel = channeltest.SetField(m.Channel, "to", "not an address") }},
		{"empty recipient", func(m *channels.Message) { m.Channel = channeltest.SetField(m.Channel, "to", "") }},
		{"missing attachment", func(m *channels.Message) {
			m.Attachments = []channels.Attachment{{Name: "r.csv", Path: filepath.Join(dir, "gone.csv")}}
		}},
		{"attachment is a folder", func(m *channels.Message) {
			m.Attachments = []channels.Attachment{{Name: "r.csv", Path: dir}}
		}},
		{"content ID that breaks its header", func(m *channels.Message) {
			m.HTML = `<img src="cid:x">`
			png := filepath.Join(dir, "c.png")
			if err := os.WriteFile(png, []byte("\x89PNG"), 0o600); err != nil {
				t.Fatal(err)
			}
			m.Attachments = []channels.Attachment{{Name: "c.png", Path: png, ContentID: "x>\r\nBcc: <all@example.com"}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := message("d1")
			tc.edit(&m)
			_, err := s.Send(t.Context(), m)
			if !channels.IsPermanent(err) {
				t.Fatalf("Send = %v, want a permanent error", err)
			}
		})
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("server accepted %d messages", n)
	}
}

func TestSendToUnreachableRelayIsTransient(t *testing.T) {
	t.Parallel()
	_, port, _ := net.SplitHostPort(channeltest.ClosedPort(t))
	p, _ := strconv.Atoi(port)
	s, err := email.New(email.Config{Host: "127.0.0.1", Port: p, TLSPolicy: "none", From: from}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Send(t.Context(), message("d1"))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send to a closed port = %v, want a transient error", err)
	}
}

func TestSendEndsWithContextDuringHandshake(t *testing.T) {
	t.Parallel()
	// A relay that accepts the connection but never greets: the send must end
	// when its context does, not when the SMTP timeout runs out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		cancel()
		_, _ = c.Read(make([]byte, 1)) // until the client hangs up
	}()
	s, err := email.New(email.Config{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, TLSPolicy: "none", From: from, Timeout: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Send(ctx, message("d1"))
	if err == nil || channels.IsPermanent(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Send = %v, want a transient cancellation error", err)
	}
	<-served
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  email.Config
	}{
		{"no host", email.Config{From: from}},
		{"unknown TLS policy", email.Config{Host: "smtp.example.com", TLSPolicy: "sometimes", From: from}},
		{"bad from", email.Config{Host: "smtp.example.com", From: "herald at example"}},
		{"no from", email.Config{Host: "smtp.example.com"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := email.New(tc.cfg, nil); err == nil {
				_ = s.Close()
				t.Fatal("New accepted the config")
			}
		})
	}
}

func netMailAddr(msgID string) (*mail.Address, error) {
	return mail.ParseAddress(strings.TrimSuffix(strings.TrimPrefix(msgID, "<"), ">"))
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSendReplacesEveryStaleIdleConnection fills the pool, lets the relay drop every
// connection, and sends again: each send succeeds at its first call, however many dead
// connections the pool held.
func TestSendReplacesEveryStaleIdleConnection(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	s := newSender(t, srv, nil)
	var wg sync.WaitGroup
	for i := range 8 { // concurrent sends leave several connections idle
		wg.Go(func() {
			if _, err := s.Send(t.Context(), message(fmt.Sprint("a", i))); err != nil {
				t.Errorf("Send: %v", err)
			}
		})
	}
	wg.Wait()
	srv.DropConnections()
	for i := range email.DefaultMaxIdle + 2 {
		if _, err := s.Send(t.Context(), message(fmt.Sprint("b", i))); err != nil {
			t.Fatalf("Send %d after the relay dropped the idle connections: %v", i, err)
		}
	}
	if got := len(srv.Messages()); got != 8+email.DefaultMaxIdle+2 {
		t.Fatalf("server has %d messages", got)
	}
}

// TestSendRetiresConnectionsIdleTooLong uses no connection that has been idle for longer
// than MaxIdleTime: relays and firewalls drop quiet connections without telling.
func TestSendRetiresConnectionsIdleTooLong(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	at := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newSender(t, srv, nil, func(c *email.Config) { c.Clock, c.MaxIdleTime = clock.NowFrom(at), 30*time.Second })
	send := func(id string) {
		t.Helper()
		if _, err := s.Send(t.Context(), message(id)); err != nil {
			t.Fatalf("Send(%s): %v", id, err)
		}
	}
	send("a")
	mu.Lock()
	now = now.Add(29 * time.Second)
	mu.Unlock()
	send("b") // reused: idle for 29 s
	if got := srv.Sessions(); got != 1 {
		t.Fatalf("%d sessions after a send within MaxIdleTime, want 1", got)
	}
	mu.Lock()
	now = now.Add(60 * time.Second)
	mu.Unlock()
	send("c") // the connection idled 60 s: a new one
	if got := srv.Sessions(); got != 2 {
		t.Fatalf("%d sessions after 60 s of quiet, want 2", got)
	}
}
