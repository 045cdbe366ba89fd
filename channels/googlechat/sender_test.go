package googlechat_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/googlechat"
)

func settings(base string) *googlechat.Settings {
	s := googlechat.DefaultSettings()
	s.BaseURL = base
	return s
}

func newSender(t *testing.T, set *googlechat.Settings, env channels.Env) *googlechat.Sender {
	t.Helper()
	s, err := googlechat.New(set, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	channeltest.RunConformance(t, func(t *testing.T, log *slog.Logger) (channels.Sender, channeltest.Peer) {
		srv := channeltest.NewGoogleChatServer(t)
		return newSender(t, settings(srv.URL()), channels.Env{Logger: log, SendTimeout: 5 * time.Second}), srv
	})
}

func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewGoogleChatServer(t)
	channeltest.CheckConnectionsKept(t, googlechat.Descriptor, settings(srv.URL()), srv)
}

// report is a message of a subscription's run with the demo's report.
func report(t *testing.T, ch channels.Channel, regions int, links bool) channels.Message {
	t.Helper()
	g := &grid.Grid{Title: "Revenue by region", Format: grid.FormatGrid, RowHeaders: []string{"Region"},
		Columns: []grid.Column{{Path: []string{"Revenue"}, Format: "#,##0.00"}},
		Rows: func(yield func(grid.Row, error) bool) {
			for i := range regions {
				v := 1234.5 * float64(i+1)
				if !yield(grid.Row{Headers: []string{fmt.Sprintf("<b>Region %d</b>", i)}, Values: []*float64{&v}}, nil) {
					return
				}
			}
		}}
	var b bytes.Buffer
	if err := render.HTML(&b, g, 50); err != nil {
		t.Fatal(err)
	}
	pdf := filepath.Join(t.TempDir(), "revenue.pdf")
	if err := os.WriteFile(pdf, []byte("%PDF-1.4"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := 35.5
	m := channels.Message{DeliveryID: "d-report", Channel: ch, Subject: "Revenue alert <users/all>",
		Text: "Revenue so far: 35.50\nsecond line", HTML: b.String(),
		Attachments: []channels.Attachment{{Name: "Revenue by region.pdf", ContentType: "application/pdf", Path: pdf}},
		Source: channels.Source{Subscription: "/svc/projects/p/users/u/subscriptions/s1", SubscriptionTitle: "Revenue watch",
			Values: map[string]*float64{"/svc/md/p/obj/12": &v}}}
	if links {
		m.Links.Files = []channels.FileLink{{Name: "Revenue by region.pdf", URL: "https://herald.example.com/f/abc.0.sig"}}
	}
	return m
}

// TestMessageShowsTheReport: the text is the subject, its "<" unable to
// mention anyone; the card has the subject as its title (plain text) and
// the subscription's title below, the text, the
// value, each region with its revenue in the metric's format, escaped, and
// an "Open" button with the download link.
func TestMessageShowsTheReport(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewGoogleChatServer(t)
	s := newSender(t, settings(srv.URL()), channels.Env{})
	id, err := s.Send(t.Context(), report(t, srv.Channel(), 3, true))
	if err != nil {
		t.Fatalf("Send: %v (refused %v)", err, srv.Refused())
	}
	m := srv.Messages()[0]
	if id != m.Name {
		t.Errorf("provider id %q, want the message's name %q", id, m.Name)
	}
	if m.Text != "Revenue alert <\u200busers/all>" || m.Header != "Revenue alert <users/all>" ||
		m.Card["header"].(map[string]any)["subtitle"] != "Revenue watch" {
		t.Errorf("text %q, header %q", m.Text, m.Header)
	}
	texts := strings.Join(m.Texts, "\n")
	if !strings.Contains(texts, "Revenue so far: 35.50<br>second line") || !strings.Contains(texts, "Revenue by region") {
		t.Errorf("texts = %q", m.Texts)
	}
	want := "[[/svc/md/p/obj/12 35.5] [&lt;b&gt;Region 0&lt;/b&gt; <b>Revenue</b> 1,234.50] [&lt;b&gt;Region 1&lt;/b&gt; <b>Revenue</b> 2,469.00] [&lt;b&gt;Region 2&lt;/b&gt; <b>Revenue</b> 3,703.50]]"
	if got := fmt.Sprint(m.Rows); got != want {
		t.Errorf("rows = %s\nwant %s", got, want)
	}
	if len(m.Buttons) != 1 || m.Buttons[0] != (channeltest.TeamsAction{Title: "Open Revenue by region.pdf", URL: "https://herald.example.com/f/abc.0.sig"}) {
		t.Errorf("buttons = %+v", m.Buttons)
	}
}

// TestThreadPerSubscription: the messages of one subscription share a
// thread, sent with the reply option Google needs; another subscription's
// go to another; a message no subscription made starts its own.
func TestThreadPerSubscription(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewGoogleChatServer(t)
	s := newSender(t, settings(srv.URL()), channels.Env{})
	send := func(id, sub string) {
		t.Helper()
		m := channels.Message{DeliveryID: id, Channel: srv.Channel(), Subject: "Revenue alert", Text: "t",
			Source: channels.Source{Subscription: sub}}
		if _, err := s.Send(t.Context(), m); err != nil {
			t.Fatalf("Send: %v (refused %v)", err, srv.Refused())
		}
	}
	send("d1", "/svc/projects/p/users/u/subscriptions/a")
	send("d2", "/svc/projects/p/users/u/subscriptions/a")
	send("d3", "/svc/projects/p/users/u/subscriptions/b")
	send("d4", "")
	ms := srv.Messages()
	if ms[0].Thread != ms[1].Thread || ms[0].ThreadKey == "" || ms[0].ReplyOption != googlechat.ReplyOption {
		t.Errorf("one subscription's messages: threads %q and %q, key %q, option %q", ms[0].Thread, ms[1].Thread, ms[0].ThreadKey, ms[0].ReplyOption)
	}
	if ms[2].Thread == ms[0].Thread || ms[3].ThreadKey != "" || ms[3].Thread == ms[0].Thread {
		t.Errorf("threads %q %q %q", ms[0].Thread, ms[2].Thread, ms[3].Thread)
	}
}

// TestRetryMakesNoSecondMessage: a retry of a delivery carries the same
// request id, and Google Chat answers it with the message the first made.
func TestRetryMakesNoSecondMessage(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewGoogleChatServer(t)
	s := newSender(t, settings(srv.URL()), channels.Env{})
	m := channels.Message{DeliveryID: "d1", Channel: srv.Channel(), Subject: "s", Text: "t"}
	a, err1 := s.Send(t.Context(), m)
	b, err2 := s.Send(t.Context(), m)
	if err1 != nil || err2 != nil || a != b || !srv.Messages()[1].Repeat {
		t.Fatalf("two sends of one delivery: %q %v, %q %v", a, err1, b, err2)
	}
}

// TestOutcomes: 429 and 5xx may pass later, after the Retry-After; other
// answers never will, and no error or log line holds the key or token.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status    int
		permanent bool
		delay     time.Duration
	}{
		{http.StatusTooManyRequests, false, 3 * time.Second},
		{http.StatusServiceUnavailable, false, 3 * time.Second},
		{http.StatusBadRequest, true, 0},
		{http.StatusForbidden, true, 0},
		{http.StatusNotFound, true, 0},
		{http.StatusMovedPermanently, true, 0},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(tc.status)
				_, _ = fmt.Fprintf(w, `{"error":{"code":%d,"message":"bad token T0K3N-SECRET","status":"PERMISSION_DENIED"}}`, tc.status)
			}))
			t.Cleanup(srv.Close)
			var log bytes.Buffer
			s := newSender(t, settings(srv.URL), channels.Env{Logger: slog.New(slog.NewTextHandler(&log, nil))})
			ch := channels.Channel{ID: "c", Kind: googlechat.Kind, Secret: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=KEY-SECRET&token=T0K3N-SECRET"}
			_, err := s.Send(t.Context(), channels.Message{DeliveryID: "d", Channel: ch, Subject: "s", Text: "t"})
			if err == nil || channels.IsPermanent(err) != tc.permanent {
				t.Fatalf("Send = %v, want permanent %v", err, tc.permanent)
			}
			if d, _ := channels.RetryDelay(err); d != tc.delay {
				t.Errorf("retry delay %v, want %v", d, tc.delay)
			}
			if !strings.Contains(err.Error(), "PERMISSION_DENIED") {
				t.Errorf("the error does not say Google's status: %v", err)
			}
			for _, leak := range []string{"KEY-SECRET", "T0K3N-SECRET"} {
				if strings.Contains(err.Error(), leak) || strings.Contains(log.String(), leak) {
					t.Errorf("%s leaks: %v\n%s", leak, err, log.String())
				}
			}
		})
	}
}

// TestParseSecret: the URL must be a space's messages on chat.googleapis.com
// (or googleChat.baseURL's host) with its key and token; the configuration
// shows only the host.
func TestParseSecret(t *testing.T) {
	t.Parallel()
	const good = "https://chat.googleapis.com/v1/spaces/AAAAb1c2/messages?key=AIzaK&token=T0K"
	for _, tc := range []struct{ url, want string }{
		{good, ""},
		{"https://CHAT.googleapis.com:443/v1/spaces/AAAAb1c2/messages?key=AIzaK&token=T0K", ""},
		{"http://127.0.0.1:9/v1/spaces/A/messages?key=k&token=t", ""}, // googleChat.baseURL's host
		{"http://chat.googleapis.com/v1/spaces/A/messages?key=k&token=t", "must be on https://chat.googleapis.com"},
		{"https://evil.example.com/v1/spaces/A/messages?key=k&token=t", "must be on https://chat.googleapis.com"},
		{"https://chat.googleapis.com.evil.example/v1/spaces/A/messages?key=k&token=t", "must be on https://chat.googleapis.com"},
		{"https://chat.googleapis.com/v1/spaces/A/members?key=k&token=t", "must be a space's messages"},
		{"https://chat.googleapis.com/v1/spaces/A/../B/messages?key=k&token=t", "must be a space's messages"},
		{"https://chat.googleapis.com/v1/spaces/A/messages?key=k", "must hold the webhook's key and token"},
		{"https://u:p@chat.googleapis.com/v1/spaces/A/messages?key=k&token=t", "must be a Google Chat webhook URL"},
		{"", "is required"},
	} {
		out, err := googlechat.Descriptor.ParseSecret(settings("http://127.0.0.1:9"), json.RawMessage(`{}`), tc.url)
		if tc.want == "" {
			if err != nil || strings.Contains(string(out), "token") || googlechat.Descriptor.Recipient(out) == "" {
				t.Errorf("%s: ParseSecret = %s, %v", tc.url, out, err)
			}
			continue
		}
		var fe *channels.FieldError
		if !errors.As(err, &fe) || fe.Field != "url" || !strings.Contains(fe.Message, tc.want) {
			t.Errorf("%s: ParseSecret = %v, want %q on url", tc.url, err, tc.want)
		}
	}
	out, _ := googlechat.Descriptor.ParseSecret(googlechat.DefaultSettings(), nil, good)
	if string(out) != `{"host":"chat.googleapis.com"}` {
		t.Errorf("kept %s", out)
	}
	if err := settings("ftp://x").Validate(); err == nil || !strings.Contains(err.Error(), "baseURL") {
		t.Errorf("Validate of a bad baseURL = %v", err)
	}
}

// TestDestinationNeverNamesTheToken: one space is one destination, named
// by its host and a digest of its path.
func TestDestinationNeverNamesTheToken(t *testing.T) {
	t.Parallel()
	s := newSender(t, googlechat.DefaultSettings(), channels.Env{})
	a := s.Destination(channels.Channel{Secret: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=K1&token=T1"})
	b := s.Destination(channels.Channel{Secret: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=K2&token=T2"})
	c := s.Destination(channels.Channel{Secret: "https://chat.googleapis.com/v1/spaces/BBB/messages?key=K1&token=T1"})
	if a != b || a == c || !strings.HasPrefix(a, "chat.googleapis.com ") || strings.Contains(a, "AAA") || strings.Contains(a, "T1") {
		t.Errorf("destinations %q %q %q", a, b, c)
	}
}

// TestMessageFitsGoogleChat: a long text and a long table make a message
// within Google Chat's 32,000 bytes, which the fake takes.
func TestMessageFitsGoogleChat(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewGoogleChatServer(t)
	s := newSender(t, settings(srv.URL()), channels.Env{})
	m := report(t, srv.Channel(), 120, false)
	m.Text = strings.Repeat("Revenue fell everywhere <&>. ", 3000)
	if _, err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v (refused %v)", err, srv.Refused())
	}
	got := srv.Messages()[0]
	if len(got.Rows) > 21 || !strings.Contains(strings.Join(got.Texts, "\n"), "are in Herald&#39;s console") {
		t.Errorf("%d rows; texts %q", len(got.Rows), got.Texts)
	}
}
