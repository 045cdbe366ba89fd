package slack_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/slack"
	"github.com/heraldhq/herald/channels/slack/slacktest"
)

func newSender(t *testing.T, srv *slacktest.Server, mod ...func(*slack.Config)) *slack.Sender {
	cfg := slack.Config{BaseURL: srv.URL(), Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	s := slack.New(cfg)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	channeltest.RunConformance(t, func(t *testing.T, logger *slog.Logger) (channels.Sender, channeltest.Peer) {
		srv := slacktest.New(t)
		return newSender(t, srv, func(c *slack.Config) { c.Logger = logger }), srv
	})
}

func message(ch channels.Channel, id string) channels.Message {
	return channels.Message{DeliveryID: id, Channel: ch, Subject: "Revenue alert", Text: "Revenue fell to 12."}
}

type block struct {
	Type string `json:"type"`
	Text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"text"`
}

func blocks(t *testing.T, m slacktest.Message) []block {
	t.Helper()
	var bs []block
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		t.Fatalf("blocks %s: %v", m.Blocks, err)
	}
	return bs
}

func TestPostShape(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	id, err := newSender(t, srv).Send(t.Context(), message(srv.Channel(), "d1"))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server has %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if want := srv.ChannelID() + "/" + m.TS; id != want {
		t.Errorf("provider id = %q, want %q", id, want)
	}
	if m.Channel != srv.ChannelID() || m.Text != "*Revenue alert*\nRevenue fell to 12." || m.DeliveryID != "d1" || m.EventType != slack.EventType || m.Files != nil {
		t.Errorf("message = %+v", m)
	}
	bs := blocks(t, m)
	if len(bs) != 2 || bs[0].Type != "header" || bs[0].Text.Type != "plain_text" || bs[0].Text.Text != "Revenue alert" ||
		bs[1].Type != "section" || bs[1].Text.Type != "mrkdwn" || bs[1].Text.Text != "Revenue fell to 12." {
		t.Errorf("blocks = %s", m.Blocks)
	}
}

func TestPostWithoutSubjectOrDeliveryID(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	m := message(srv.Channel(), "")
	m.Subject = "  "
	if _, err := newSender(t, srv).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.Messages()[0]
	if got.Text != "Revenue fell to 12." || got.DeliveryID != "" || got.EventType != "" {
		t.Errorf("message = %+v", got)
	}
	if bs := blocks(t, got); len(bs) != 1 || bs[0].Type != "section" {
		t.Errorf("blocks = %s", got.Blocks)
	}
}

func TestEmptyMessageIsPermanent(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	m := message(srv.Channel(), "d1")
	m.Subject, m.Text = "", " \n"
	if _, err := newSender(t, srv).Send(t.Context(), m); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error", err)
	}
	if n := srv.Calls(); n != 0 {
		t.Fatalf("%d calls for an empty message", n)
	}
}

func TestTextIsEscaped(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	m := message(srv.Channel(), "d1")
	m.Subject = "Margin < 5% & falling"
	m.Text = "<!channel> see <https://evil.example|this> & a > b"
	if _, err := newSender(t, srv).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.Messages()[0]
	wantText := "*Margin &lt; 5% &amp; falling*\n&lt;!channel&gt; see &lt;https://evil.example|this&gt; &amp; a &gt; b"
	if got.Text != wantText {
		t.Errorf("text = %q, want %q", got.Text, wantText)
	}
	bs := blocks(t, got)
	if bs[0].Text.Text != m.Subject {
		t.Errorf("header = %q, want the subject as plain text %q", bs[0].Text.Text, m.Subject)
	}
	if want := "&lt;!channel&gt; see &lt;https://evil.example|this&gt; &amp; a &gt; b"; bs[1].Text.Text != want {
		t.Errorf("section = %q, want %q", bs[1].Text.Text, want)
	}
	if d := srv.Deliveries()[0]; d.Text != "*"+m.Subject+"*\n"+m.Text {
		t.Errorf("as shown: %q", d.Text)
	}
}

func TestLongTextSplitsIntoSections(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "Line %03d: revenue & costs <per region> were within the expected band.\n", i)
	}
	m := message(srv.Channel(), "d1")
	m.Subject = strings.Repeat("S", 200)
	m.Text = b.String()
	if _, err := newSender(t, srv).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.Messages()[0]
	bs := blocks(t, got)
	if n := utf8.RuneCountInString(bs[0].Text.Text); n != 150 || !strings.HasSuffix(bs[0].Text.Text, "…") {
		t.Errorf("header has %d characters: %q", n, bs[0].Text.Text)
	}
	var joined []string
	for _, s := range bs[1:] {
		if n := utf8.RuneCountInString(s.Text.Text); n > 3000 {
			t.Errorf("a section has %d characters", n)
		}
		if !strings.HasSuffix(s.Text.Text, "band.") {
			t.Errorf("a section ends mid-line: …%q", s.Text.Text[len(s.Text.Text)-20:])
		}
		joined = append(joined, s.Text.Text)
	}
	if len(bs) < 3 {
		t.Fatalf("%d blocks, want the text split", len(bs))
	}
	if got, want := slacktest.Unescape(strings.Join(joined, "\n")), strings.TrimSpace(m.Text); got != want {
		t.Errorf("the sections do not add up to the text")
	}
}

func TestTextCutAtSlackLimit(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("&", 50000)
	got := slack.Text("", long)
	if n := utf8.RuneCountInString(got); n > 40000 || !strings.HasSuffix(got, "&amp;…") {
		t.Fatalf("Text has %d characters, ends %q", n, got[len(got)-12:])
	}
	bs := slack.Blocks("", long)
	if len(bs) != 50 {
		t.Fatalf("%d blocks, want 50", len(bs))
	}
	srv := slacktest.New(t)
	m := message(srv.Channel(), "d1")
	m.Subject, m.Text = "", long
	if _, err := newSender(t, srv).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var pdf = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n\x00\xff\x10binary")

func TestAttachmentSharedAsOneMessage(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	m := message(srv.Channel(), "d1")
	m.Attachments = []channels.Attachment{{Name: "revenue.pdf", ContentType: "application/pdf", Path: writeFile(t, "r.pdf", pdf)}}
	id, err := newSender(t, srv).Send(t.Context(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server has %d messages, want 1", len(msgs))
	}
	got := msgs[0]
	if got.Channel != srv.ChannelID() || got.Text != "*Revenue alert*\nRevenue fell to 12." || len(got.Files) != 1 {
		t.Fatalf("share = %+v", got)
	}
	f := got.Files[0]
	if id != f.ID || f.Name != "revenue.pdf" || f.Title != "revenue.pdf" || f.Size != int64(len(pdf)) || string(f.Data) != string(pdf) {
		t.Fatalf("file = %+v (%q), provider id %q", f, f.Data, id)
	}
}

func TestAttachmentsShareTogether(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	m := message(srv.Channel(), "d1")
	csv := []byte("region,revenue\neu,12.5\n")
	m.Attachments = []channels.Attachment{
		{Name: "revenue.pdf", Path: writeFile(t, "r.pdf", pdf)},
		{Path: writeFile(t, "revenue.csv", csv)},
	}
	if _, err := newSender(t, srv).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || len(msgs[0].Files) != 2 {
		t.Fatalf("messages = %+v, want one share of two files", msgs)
	}
	if f := msgs[0].Files[1]; f.Name != "revenue.csv" || string(f.Data) != string(csv) {
		t.Fatalf("second file = %+v", f)
	}
}

func TestBadAttachmentsArePermanent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		att  channels.Attachment
		want string
	}{
		{"too large", channels.Attachment{Name: "big.pdf", Path: writeFile(t, "big.pdf", make([]byte, 201))}, `"big.pdf" has 201 bytes`},
		{"missing", channels.Attachment{Name: "gone.pdf", Path: filepath.Join(dir, "gone.pdf")}, `"gone.pdf"`},
		{"folder", channels.Attachment{Name: "dir.pdf", Path: dir}, `"dir.pdf"`},
		{"empty", channels.Attachment{Name: "empty.pdf", Path: writeFile(t, "empty.pdf", nil)}, `"empty.pdf" is empty`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := slacktest.New(t)
			m := message(srv.Channel(), "d1")
			m.Attachments = []channels.Attachment{{Name: "ok.pdf", Path: writeFile(t, "ok.pdf", pdf)}, tc.att}
			_, err := newSender(t, srv, func(c *slack.Config) { c.MaxFileBytes = 200 }).Send(t.Context(), m)
			if !channels.IsPermanent(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Send = %v, want a permanent error with %s", err, tc.want)
			}
			if n := srv.Calls(); n != 0 {
				t.Fatalf("%d calls before the attachments were checked", n)
			}
		})
	}
}

func TestErrorClassification(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		fail       slacktest.Failure
		permanent  bool
		retryAfter time.Duration
	}{
		{"rate limited", slacktest.RateLimited, false, time.Second},
		{"rate limited, longer", slacktest.Failure{Status: 429, Error: "ratelimited", RetryAfter: 30}, false, 30 * time.Second},
		{"ratelimited in the body", slacktest.Failure{Error: "ratelimited", RetryAfter: 7}, false, 7 * time.Second},
		{"429 without Retry-After", slacktest.Failure{Status: 429, Error: "ratelimited"}, false, 0},
		{"internal error", slacktest.Failure{Status: 500, Error: "internal_error"}, false, 0},
		{"unavailable", slacktest.Failure{Status: 503}, false, 0},
		{"fatal error in the body", slacktest.Failure{Error: "fatal_error"}, false, 0},
		{"unknown error", slacktest.Failure{Error: "something_new"}, false, 0},
		{"bad request status", slacktest.Failure{Status: 400, Error: "invalid_request"}, true, 0},
		{"channel not found", slacktest.ChannelNotFound, true, 0},
		{"not in channel", slacktest.Failure{Error: "not_in_channel"}, true, 0},
		{"archived", slacktest.Failure{Error: "is_archived"}, true, 0},
		{"revoked", slacktest.Failure{Error: "token_revoked"}, true, 0},
		{"expired", slacktest.Failure{Error: "token_expired"}, true, 0},
		{"inactive", slacktest.Failure{Error: "account_inactive"}, true, 0},
		{"not authed", slacktest.Failure{Error: "not_authed"}, true, 0},
		{"missing scope", slacktest.Failure{Error: "missing_scope"}, true, 0},
		{"restricted", slacktest.Failure{Error: "restricted_action"}, true, 0},
		{"too long", slacktest.Failure{Error: "msg_too_long"}, true, 0},
		{"no text", slacktest.Failure{Error: "no_text"}, true, 0},
		{"invalid blocks", slacktest.Failure{Error: "invalid_blocks"}, true, 0},
	}
	for _, tc := range cases {
		for _, attach := range []bool{false, true} {
			name := tc.name
			if attach {
				name += " (share)"
			}
			t.Run(name, func(t *testing.T) {
				srv := slacktest.New(t)
				m := message(srv.Channel(), "d1")
				if attach {
					m.Attachments = []channels.Attachment{{Name: "r.pdf", Path: writeFile(t, "r.pdf", pdf)}}
				}
				srv.FailNext(1, tc.fail)
				_, err := newSender(t, srv).Send(t.Context(), m)
				if err == nil {
					t.Fatal("Send succeeded through a refusal")
				}
				if got := channels.IsPermanent(err); got != tc.permanent {
					t.Fatalf("IsPermanent = %v, want %v (err: %v)", got, tc.permanent, err)
				}
				d, ok := channels.RetryDelay(err)
				if tc.retryAfter > 0 && (!ok || d != tc.retryAfter) {
					t.Fatalf("RetryDelay = %v, %v; want %v (err: %v)", d, ok, tc.retryAfter, err)
				}
				if tc.retryAfter == 0 && ok {
					t.Fatalf("RetryDelay = %v, want none (err: %v)", d, err)
				}
				if tc.fail.Error != "" && tc.fail.Status != 429 && !strings.Contains(err.Error(), tc.fail.Error) {
					t.Errorf("error does not name Slack's error code: %v", err)
				}
				if n := len(srv.Messages()); n != 0 {
					t.Fatalf("server recorded %d messages", n)
				}
			})
		}
	}
}

func TestFailedCompletionIsRetried(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	s := newSender(t, srv)
	m := message(srv.Channel(), "d1")
	m.Attachments = []channels.Attachment{
		{Name: "a.pdf", Path: writeFile(t, "a.pdf", pdf)},
		{Name: "b.pdf", Path: writeFile(t, "b.pdf", []byte("second file"))},
	}
	srv.FailMethod("files.completeUploadExternal", 1, slacktest.Failure{Status: http.StatusServiceUnavailable})
	if _, err := s.Send(t.Context(), m); err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a transient error", err)
	}
	if n := srv.Calls(); n != 3 {
		t.Fatalf("%d calls for a share of two files, want 3", n)
	}
	if _, err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("retry: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || len(msgs[0].Files) != 2 || string(msgs[0].Files[1].Data) != "second file" {
		t.Fatalf("messages = %+v, want one share of two files", msgs)
	}
}

func TestInvalidTokenIsPermanent(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	ch := srv.Channel()
	ch.Secret = "xoxb-1111111111-2222222222-NotTheRightTokenAtAll"
	for _, attach := range []bool{false, true} {
		m := message(ch, "d1")
		if attach {
			m.Attachments = []channels.Attachment{{Name: "r.pdf", Path: writeFile(t, "r.pdf", pdf)}}
		}
		_, err := newSender(t, srv).Send(t.Context(), m)
		if !channels.IsPermanent(err) || !strings.Contains(err.Error(), "invalid_auth") {
			t.Fatalf("Send = %v, want permanent invalid_auth", err)
		}
		if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), ch.Secret) {
			t.Fatalf("error reveals the token: %v", err)
		}
	}
	ch.Secret = ""
	if _, err := newSender(t, srv).Send(t.Context(), message(ch, "d1")); !channels.IsPermanent(err) {
		t.Fatalf("Send without a token = %v, want a permanent error", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("server recorded %d messages", n)
	}
}

func TestUnknownChannelIsPermanent(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	ch := channeltest.SetField(srv.Channel(), "channel", "C0NOSUCH00")
	if _, err := newSender(t, srv).Send(t.Context(), message(ch, "d1")); !channels.IsPermanent(err) || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("Send = %v, want permanent channel_not_found", err)
	}
}

func TestUnreachableIsTransient(t *testing.T) {
	t.Parallel()
	addr := channeltest.ClosedPort(t)
	srv := slacktest.New(t)
	s := slack.New(slack.Config{BaseURL: "http://" + addr + "/api/", Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = s.Close() })
	_, err := s.Send(t.Context(), message(srv.Channel(), "d1"))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a transient error", err)
	}
}

func TestTimeoutIsTransient(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	srv := slacktest.New(t)
	s := slack.New(slack.Config{BaseURL: hang.URL + "/api/", Timeout: 50 * time.Millisecond})
	t.Cleanup(func() { _ = s.Close() })
	_, err := s.Send(t.Context(), message(srv.Channel(), "d1"))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a transient error", err)
	}
}

func TestUnreadableAcceptanceIsPermanent(t *testing.T) {
	t.Parallel()
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":tru`))
	}))
	t.Cleanup(garbled.Close)
	srv := slacktest.New(t)
	s := slack.New(slack.Config{BaseURL: garbled.URL + "/api"})
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Send(t.Context(), message(srv.Channel(), "d1")); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error: the message may be posted", err)
	}
}

func TestUploadURLOnAnotherHostIsRefused(t *testing.T) {
	t.Parallel()
	var uploads int
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uploads++
		mu.Unlock()
	}))
	t.Cleanup(other.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"upload_url":%q,"file_id":"F0123456789"}`, other.URL+"/upload")
	}))
	t.Cleanup(api.Close)
	srv := slacktest.New(t)
	s := slack.New(slack.Config{BaseURL: api.URL + "/api/"})
	t.Cleanup(func() { _ = s.Close() })
	m := message(srv.Channel(), "d1")
	m.Attachments = []channels.Attachment{{Name: "r.pdf", Path: writeFile(t, "r.pdf", pdf)}}
	if _, err := s.Send(t.Context(), m); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if uploads != 0 {
		t.Fatal("the token was sent to a host that is not Slack's")
	}
}

func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	s := newSender(t, srv)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			m := message(srv.Channel(), fmt.Sprint("d", i))
			if i%2 == 1 {
				m.Attachments = []channels.Attachment{{Name: "r.pdf", Path: writeFile(t, "r.pdf", pdf)}}
			}
			_, err := s.Send(t.Context(), m)
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
	if n := len(srv.Messages()); n != 8 {
		t.Fatalf("server has %d messages, want 8", n)
	}
}

func TestBadBaseURLIsPermanent(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	s := slack.New(slack.Config{BaseURL: "not a url"})
	if _, err := s.Send(t.Context(), message(srv.Channel(), "d1")); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error", err)
	}
}

// TestSenderKeepsAConnectionPerConcurrentSend: the slack section's sender
// keeps as many connections to the Web API open as the kind runs sends at once.
func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	set := slack.DefaultSettings()
	set.BaseURL = srv.URL()
	channeltest.CheckConnectionsKept(t, slack.Descriptor, set, srv)
}
