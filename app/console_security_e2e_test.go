package app_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
)

// consoleClient is a browser without JavaScript: a cookie jar and forms.
type consoleClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *consoleClient) get(path string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	return c.do(req)
}

func (c *consoleClient) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *consoleClient) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	req.Header.Set("User-Agent", "console-test")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of a page's forms.
func (c *consoleClient) csrf(path string) string {
	c.t.Helper()
	_, body := c.get(path)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		c.t.Fatalf("no CSRF token on %s", path)
	}
	return m[1]
}

func (c *consoleClient) signIn(login, password string) {
	c.t.Helper()
	tok := c.csrf("/console/login")
	resp, _ := c.post("/console/login", url.Values{"csrf": {tok}, "login": {login}, "password": {password}})
	if resp.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("sign in: %d", resp.StatusCode)
	}
}

// TestConsoleGuardsItsForms: every state-changing form needs the CSRF token
// bound to the browser's console cookie; pages forbid framing and inline
// script; a channel's secret never appears in a page; values are escaped;
// another user's channel is not found.
func TestConsoleGuardsItsForms(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	c := newConsoleClient(t, w.b.URL)

	// Without the token, or with another browser's, a form is refused.
	resp, _ := c.post("/console/login", url.Values{"login": {w.b.Config.AdminLogin}, "password": {apptest.AdminPassword}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign in without a CSRF token: %d", resp.StatusCode)
	}
	other := newConsoleClient(t, w.b.URL)
	foreign := other.csrf("/console/login")
	c.get("/console/login") // c's own console cookie
	if resp, _ := c.post("/console/login", url.Values{"csrf": {foreign}, "login": {"jane@example.com"}, "password": {"S3cret-pass"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign in with another browser's token: %d", resp.StatusCode)
	}
	c.signIn("jane@example.com", "S3cret-pass")

	// A channel whose title tries markup and whose secret must stay hidden.
	const secret = "twilio-secret-never-shown"
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"smsConfiguration":`+
		`{"username":"AC1","password":"`+secret+`","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"<script>alert(1)</script>"}}}`)
	wantStatus(t, r, 201)
	chURI := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	cid := chURI[strings.LastIndexByte(chURI, '/')+1:]
	for _, path := range []string{"/console/channels", "/console/channels/" + cid} {
		resp, body := c.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if strings.Contains(body, secret) {
			t.Errorf("%s shows the channel's secret", path)
		}
		if strings.Contains(body, "<script>alert(1)") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not escape the title", path)
		}
		if strings.Contains(body, "<script>") && !strings.Contains(body, `<script src="/console/static/console.js" defer></script>`) {
			t.Errorf("%s has inline script", path)
		}
	}
	// Deleting needs the token too.
	if resp, _ := c.post("/console/channels/"+cid+"/delete", url.Values{}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("delete without a token: %d", resp.StatusCode)
	}
	wantStatus(t, w.jane.do("GET", w.janeURI+"/channelConfigurations/"+cid, ""), 200)

	// The admin's console does not open jane's channel.
	admin := newConsoleClient(t, w.b.URL)
	admin.signIn(w.b.Config.AdminLogin, apptest.AdminPassword)
	if resp, body := admin.get("/console/channels/" + cid); resp.StatusCode != http.StatusNotFound || strings.Contains(body, "+420601234567") {
		t.Errorf("another user's channel: %d", resp.StatusCode)
	}

	// Past the temporary token's life, the console fetches a new one itself.
	w.b.Clock.Advance(11 * time.Minute)
	resp, body := c.get("/console/channels")
	renewed := false
	for _, ck := range resp.Cookies() {
		renewed = renewed || (ck.Name == "SVCAuthTT" && ck.Value != "")
	}
	if resp.StatusCode != http.StatusOK || !renewed || !strings.Contains(body, "Channels") {
		t.Errorf("after the temporary token expired: %d, new token set: %v", resp.StatusCode, renewed)
	}

	// Signing out ends the session: the console asks to sign in again.
	tok := c.csrf("/console/channels")
	if resp, _ := c.post("/console/logout", url.Values{"csrf": {tok}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if resp, _ := c.get("/console/channels"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/login") {
		t.Errorf("after signing out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

var (
	previewLink = regexp.MustCompile(`href="(/console/projects/[^"]+/preview/attachments/0/PDF)"`)
	runFileLink = regexp.MustCompile(`href="(/console/projects/[^"]+/runs/[^"]+/attachments/0)"`)
	channelLink = regexp.MustCompile(`href="/console/channels/([a-z0-9]{8,})"`)
)

// TestConsoleDownloadsAndTestMessage: without JavaScript, the demo
// subscription's preview downloads its PDF as the next fire would attach it,
// the run history downloads the PDF a run attached, and a channel's "send a
// test message" mails the channel and shows the channel saying the provider
// accepted it.
func TestConsoleDownloadsAndTestMessage(t *testing.T) {
	gate.Parallel(t)
	smtp := channeltest.NewSMTPServer(t)
	b := apptest.StartDemo(t, func(cfg *app.Config) {
		sec := smtpOf(cfg)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "reports@herald.test"
	})
	c := newConsoleClient(t, b.URL)
	c.signIn(b.Config.AdminLogin, apptest.AdminPassword)
	resp, _ := c.get("/console/projects")
	project := resp.Header.Get("Location") // the one project: straight to it
	_, list := c.get(project)
	sub := regexp.MustCompile(`href="(` + regexp.QuoteMeta(project) + `/subscriptions/[a-z0-9]{8,})"`).FindStringSubmatch(list)
	if sub == nil {
		t.Fatalf("no subscription on %s", project)
	}

	_, preview := c.get(sub[1] + "/preview")
	link := previewLink.FindStringSubmatch(preview)
	if link == nil {
		t.Fatalf("no PDF download in the preview:\n%s", preview)
	}
	resp, pdf := c.get(link[1])
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(pdf, "%PDF-") || resp.Header.Get("Content-Type") != "application/pdf" {
		t.Errorf("preview PDF: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	b.Clock.Advance(time.Minute) // the demo fires
	waitFor(t, func() bool { _, page := c.get(sub[1]); return runFileLink.MatchString(page) })
	_, page := c.get(sub[1])
	resp, pdf = c.get(runFileLink.FindStringSubmatch(page)[1])
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(pdf, "%PDF-") {
		t.Errorf("the run's PDF: %d", resp.StatusCode)
	}

	_, chans := c.get("/console/channels")
	cid := channelLink.FindStringSubmatch(chans)
	if cid == nil {
		t.Fatalf("no channel listed")
	}
	before := len(smtp.Messages())
	resp, after := c.post("/console/channels/"+cid[1]+"/test", url.Values{"csrf": {c.csrf("/console/channels/" + cid[1])}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("test message: %d", resp.StatusCode)
	}
	if !strings.Contains(after, "Test message accepted by the provider") {
		t.Errorf("no notice of the accepted test")
	}
	found := false
	for _, m := range smtp.Messages()[before:] {
		found = found || m.Subject == "Test message from Herald"
	}
	if !found {
		t.Errorf("the SMTP server got no test message")
	}
}

// TestConsoleNoticesAndNextAreTheConsoles: a page's ?notice= is a key of the console's
// own messages, never text shown as given (an unknown key shows nothing), and the page
// a sign-in leads to is a clean path of the console: TAB, NUL, "//" and the like lead
// to the console's home instead.
func TestConsoleNoticesAndNextAreTheConsoles(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	c := newConsoleClient(t, b.URL)
	c.signIn(b.Config.AdminLogin, apptest.AdminPassword)
	const planted = "Your account is locked; call +1 555 0100"
	_, page := c.get("/console/channels?notice=" + url.QueryEscape(planted))
	if strings.Contains(page, "+1 555 0100") || strings.Contains(page, `class="notice"`) {
		t.Errorf("a notice of the address's own words is shown")
	}
	if _, page := c.get("/console/channels?notice=channelDeleted"); !strings.Contains(page, `<p class="notice" role="status">Channel deleted.</p>`) {
		t.Errorf("the notice of a known key is not shown")
	}

	for _, next := range []string{"/console/\t/evil.example", "/\t/evil.example", "/console/\x00x", "//evil.example/console/",
		"/console/%09/x", "/console/..//evil.example", "https://evil.example/console/"} {
		_, form := c.get("/console/login?next=" + url.QueryEscape(next))
		if !strings.Contains(form, `name="next" value="/console/projects"`) {
			t.Errorf("the sign-in page keeps next %q", next)
		}
		s := newConsoleClient(t, b.URL)
		tok := s.csrf("/console/login")
		resp, _ := s.post("/console/login", url.Values{"csrf": {tok}, "next": {next},
			"login": {b.Config.AdminLogin}, "password": {apptest.AdminPassword}})
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/console/projects" {
			t.Errorf("a sign-in with next %q leads to %q, want /console/projects", next, loc)
		}
	}
}
