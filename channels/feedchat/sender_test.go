package feedchat_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/feedchat"
	"github.com/heraldhq/herald/internal/clock"
)

func newSender(srv *channeltest.ChatterServer, mod ...func(*feedchat.Config)) *feedchat.Sender {
	cfg := feedchat.Config{LoginURL: srv.URL(), ClientID: srv.ClientID(), ClientSecret: srv.ClientSecret(), Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	return feedchat.New(cfg, nil)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	channeltest.RunConformance(t, func(t *testing.T, _ *slog.Logger) (channels.Sender, channeltest.Peer) {
		srv := channeltest.NewChatterServer(t)
		return newSender(srv), srv
	})
}

func message(ch channels.Channel, id string) channels.Message {
	return channels.Message{DeliveryID: id, Channel: ch, Subject: "Revenue alert", Text: "Revenue fell to 12."}
}

func TestPostShape(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	id, err := newSender(srv, func(c *feedchat.Config) { c.APIVersion = "v60.0" }).Send(t.Context(), message(srv.Channel(), "d1"))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	posts := srv.Posts()
	if len(posts) != 1 {
		t.Fatalf("server has %d posts, want 1", len(posts))
	}
	p := posts[0]
	if p.ID != id || p.SubjectID != "me" || p.FeedElementType != "FeedItem" || p.Text != "Revenue alert\nRevenue fell to 12." || p.IdempotencyKey != "d1" {
		t.Fatalf("post = %+v, provider id %q", p, id)
	}
}

func TestTokenCachedAcrossSends(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	s := newSender(srv)
	for i := range 3 {
		if _, err := s.Send(t.Context(), message(srv.Channel(), fmt.Sprint("d", i))); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	if n := srv.TokenRequests(); n != 1 {
		t.Fatalf("%d token requests for three sends, want 1", n)
	}
}

func TestConcurrentSendsShareOneLogin(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	s := newSender(srv)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := s.Send(t.Context(), message(srv.Channel(), fmt.Sprint("d", i)))
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
	if n := srv.TokenRequests(); n != 1 {
		t.Fatalf("%d token requests for eight concurrent sends, want 1", n)
	}
}

func TestTokenRefreshedOnceOn401(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	s := newSender(srv)
	if _, err := s.Send(t.Context(), message(srv.Channel(), "d1")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	srv.ExpireTokens()
	if _, err := s.Send(t.Context(), message(srv.Channel(), "d2")); err != nil {
		t.Fatalf("Send with an expired token: %v", err)
	}
	if n := srv.TokenRequests(); n != 2 {
		t.Fatalf("%d token requests, want 2", n)
	}
	posts := srv.Posts()
	if len(posts) != 2 || posts[0].Token == posts[1].Token {
		t.Fatalf("posts = %+v, want two with different tokens", posts)
	}
}

func TestTokenExpiresIn(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	srv.SetTokenLifetime(time.Hour)
	fake := &fakeClock{t: time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)}
	s := newSender(srv, func(c *feedchat.Config) { c.Clock = clock.NowFrom(fake.Now) })
	steps := []struct {
		advance time.Duration
		logins  int
	}{
		{0, 1},
		{30 * time.Minute, 1},
		{30 * time.Minute, 2}, // an hour on: past the lifetime less its margin
		{time.Minute, 2},
	}
	for i, st := range steps {
		fake.Advance(st.advance)
		if _, err := s.Send(t.Context(), message(srv.Channel(), fmt.Sprint("d", i))); err != nil {
			t.Fatalf("step %d: Send: %v", i, err)
		}
		if n := srv.TokenRequests(); n != st.logins {
			t.Fatalf("step %d: %d token requests, want %d", i, n, st.logins)
		}
	}
}

func TestBadCredentialsArePermanent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		config func(*feedchat.Config)
		ch     func(*channels.Channel)
	}{
		{"wrong password", nil, func(c *channels.Channel) { c.Secret = "wrong-password-TOKEN123" }},
		{"unknown user", nil, func(c *channels.Channel) { *c = channeltest.SetField(*c, "username", "nobody@example.com") }},
		{"wrong client secret", func(c *feedchat.Config) { c.ClientSecret = "nope" }, nil},
		{"wrong client id", func(c *feedchat.Config) { c.ClientID = "nope" }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewChatterServer(t)
			var mods []func(*feedchat.Config)
			if tc.config != nil {
				mods = append(mods, tc.config)
			}
			ch := srv.Channel()
			if tc.ch != nil {
				tc.ch(&ch)
			}
			_, err := newSender(srv, mods...).Send(t.Context(), message(ch, "d1"))
			if !channels.IsPermanent(err) {
				t.Fatalf("Send = %v, want a permanent error", err)
			}
			if strings.Contains(err.Error(), ch.Secret) {
				t.Fatalf("error reveals the password: %v", err)
			}
		})
	}
}

func TestCachedTokenNotReusedForAnotherPassword(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	s := newSender(srv)
	if _, err := s.Send(t.Context(), message(srv.Channel(), "d1")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ch := srv.Channel()
	ch.Secret = "changed-password"
	if _, err := s.Send(t.Context(), message(ch, "d2")); !channels.IsPermanent(err) {
		t.Fatalf("Send with another password = %v, want the login to fail", err)
	}
	if n := len(srv.Posts()); n != 1 {
		t.Fatalf("server has %d posts, want 1", n)
	}
}

func TestFeedErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		status    int
		code      string
		permanent bool
	}{
		{"bad request", 400, "INVALID_INPUT", true},
		{"no access", 403, "INSUFFICIENT_ACCESS", true},
		{"api limit", 403, "REQUEST_LIMIT_EXCEEDED", false},
		{"no such version", 404, "NOT_FOUND", true},
		{"too many requests", 429, "", false},
		{"server error", 500, "UNKNOWN_EXCEPTION", false},
		{"unavailable", 503, "SERVER_UNAVAILABLE", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewChatterServer(t)
			srv.FailNext(1, tc.status, tc.code)
			_, err := newSender(srv).Send(t.Context(), message(srv.Channel(), "d1"))
			if err == nil || channels.IsPermanent(err) != tc.permanent {
				t.Fatalf("Send = %v, want permanent %v", err, tc.permanent)
			}
			if tc.code != "" && !strings.Contains(err.Error(), tc.code) {
				t.Errorf("error does not carry the error code: %v", err)
			}
		})
	}
}

// fixedServer grants tokens (or answers the token request with tokenStatus)
// and answers every feed request with feedStatus.
func fixedServer(t *testing.T, tokenStatus, feedStatus int) (*httptest.Server, *atomic.Int32, *atomic.Int32) {
	var logins, posts atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/token") {
			logins.Add(1)
			w.WriteHeader(tokenStatus)
			fmt.Fprintf(w, `{"access_token":"tok%d","instance_url":%q,"token_type":"Bearer"}`, logins.Load(), srv.URL)
			return
		}
		posts.Add(1)
		w.WriteHeader(feedStatus)
		_, _ = w.Write([]byte(`[{"errorCode":"INVALID_SESSION_ID","message":"Session expired or invalid"}]`))
	}))
	t.Cleanup(srv.Close)
	return srv, &logins, &posts
}

func TestRefusedFreshTokenIsPermanent(t *testing.T) {
	t.Parallel()
	srv, logins, posts := fixedServer(t, http.StatusOK, http.StatusUnauthorized)
	s := feedchat.New(feedchat.Config{LoginURL: srv.URL}, srv.Client())
	_, err := s.Send(t.Context(), message(channels.Channel{Config: []byte(`{"username":"u"}`), Secret: "p"}, "d1"))
	if !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error", err)
	}
	if logins.Load() != 2 || posts.Load() != 2 {
		t.Fatalf("%d logins and %d posts, want one refresh and one retry (2 and 2)", logins.Load(), posts.Load())
	}
}

func TestLoginServerErrorsAreTransient(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv, _, posts := fixedServer(t, status, http.StatusCreated)
			_, err := feedchat.New(feedchat.Config{LoginURL: srv.URL}, nil).Send(t.Context(), message(channels.Channel{Config: []byte(`{"username":"u"}`), Secret: "p"}, "d1"))
			if err == nil || channels.IsPermanent(err) {
				t.Fatalf("Send = %v, want a transient error", err)
			}
			if posts.Load() != 0 {
				t.Fatal("posted without a token")
			}
		})
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ž", 10001)
	cases := []struct {
		name, subject, text, want string
	}{
		{"both", "Alert", "Revenue fell.", "Alert\nRevenue fell."},
		{"text only", " ", "Revenue fell.", "Revenue fell."},
		{"subject only", "Alert", "", "Alert"},
		{"cut at 10000 characters", "", long, strings.Repeat("ž", 9999) + "…"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := feedchat.Text(tc.subject, tc.text, channels.Links{})
			if got != tc.want {
				t.Fatalf("Text = %.40q… (%d chars), want %.40q… (%d chars)", got, utf8.RuneCountInString(got), tc.want, utf8.RuneCountInString(tc.want))
			}
		})
	}
}

// TestTextEndsWithTheDownloadLinks: a post names each file with its link,
// after the text, and a text too long is cut to keep them.
func TestTextEndsWithTheDownloadLinks(t *testing.T) {
	t.Parallel()
	links := channels.Links{Files: []channels.FileLink{{Name: "Revenue.pdf", URL: "https://herald.example.com/f/a.0.x.s"}}}
	if got := feedchat.Text("Alert", "Revenue fell.", links); got != "Alert\nRevenue fell.\nRevenue.pdf: https://herald.example.com/f/a.0.x.s" {
		t.Errorf("Text = %q", got)
	}
	got := feedchat.Text("", strings.Repeat("ž", 20000), links)
	if utf8.RuneCountInString(got) > 10000 || !strings.HasSuffix(got, "…\nRevenue.pdf: https://herald.example.com/f/a.0.x.s") {
		t.Errorf("a long post ends %q (%d chars)", got[len(got)-60:], utf8.RuneCountInString(got))
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestSenderKeepsAConnectionPerConcurrentSend: the feedChat section's sender
// keeps as many connections to the server open as the kind runs sends at once.
func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	set := feedchat.DefaultSettings()
	set.LoginURL, set.ClientID, set.ClientSecret = srv.URL(), srv.ClientID(), srv.ClientSecret()
	channeltest.CheckConnectionsKept(t, feedchat.Descriptor, set, srv)
}
