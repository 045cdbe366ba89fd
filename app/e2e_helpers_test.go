package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/email"
)

// smtpOf is the smtp section of c.
func smtpOf(c *app.Config) *email.Settings { return c.Channels["smtp"].(*email.Settings) }

// browser is a raw HTTP client with a cookie jar, for checking the wire
// exactly as a client sees it.
type browser struct {
	t    testing.TB
	base string
	ua   string
	hc   *http.Client
}

func newBrowser(t testing.TB, base, ua string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, ua: ua, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

// errorBody returns the error object of an error reply.
func (r reply) errorBody(t testing.TB) map[string]any {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %s", r.body)
	}
	return e
}

func (b *browser) do(method, path, body string, headers ...string) reply {
	b.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("User-Agent", b.ua)
	req.Header.Set("Accept", "application/json; charset=utf-8")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

func (b *browser) login(login, password string) reply {
	b.t.Helper()
	return b.do("POST", "/svc/account/login",
		`{"postUserLogin":{"login":"`+login+`","password":"`+password+`","remember":0}}`)
}

// loginWithToken logs in and fetches a temporary token, failing the test otherwise.
func (b *browser) loginWithToken(login, password string) {
	b.t.Helper()
	if r := b.login(login, password); r.status != 200 {
		b.t.Fatalf("login %s: %d %s", login, r.status, r.body)
	}
	if r := b.do("GET", "/svc/account/token", ""); r.status != 200 {
		b.t.Fatalf("token: %d %s", r.status, r.body)
	}
}

func wantStatus(t testing.TB, r reply, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body: %s", r.status, want, r.body)
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func tt(b *browser) string {
	for _, c := range b.hc.Jar.Cookies(mustURL(b.t, b.base)) {
		if c.Name == "SVCAuthTT" {
			return c.Value
		}
	}
	return ""
}

// waitFor polls cond until it holds, for at most 30 seconds: for work other
// goroutines of the service do (a computation, a task, a delivery).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitForWithin(t, 30*time.Second, cond)
}

// waitForWithin is waitFor with a bound of d.
func waitForWithin(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("condition not met in %v", d)
		}
	}
}
