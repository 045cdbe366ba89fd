package app_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
)

func TestLoginSetsSSTCookieAndTokenSetsTT(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua-1")
	r := br.login(b.Config.AdminLogin, apptest.AdminPassword)
	wantStatus(t, r, 200)
	login := r.json(t)["userLogin"].(map[string]any)
	if !strings.HasPrefix(login["profile"].(string), "/svc/account/profile/") ||
		!strings.HasPrefix(login["state"].(string), "/svc/account/login/") {
		t.Fatalf("userLogin = %v", login)
	}
	sst := cookieHeader(r.header, "SVCAuthSST")
	for _, attr := range []string{"Path=/", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(sst, attr) {
			t.Errorf("SST cookie %q lacks %s", sst, attr)
		}
	}
	if strings.Contains(sst, "Secure") {
		t.Errorf("SST cookie %q is Secure over plain HTTP", sst)
	}
	if cookieHeader(r.header, "SVCAuthTT") != "" {
		t.Error("login set a TT cookie")
	}
	// Before a TT: the SST is good, so the challenge names the TT.
	r = br.do("GET", login["profile"].(string), "")
	wantStatus(t, r, 401)
	if got := r.header.Get("WWW-Authenticate"); got != "Service cookie=SVCAuthTT" {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(r.body, "<html>") {
		t.Errorf("TT challenge body is not HTML: %q %q", r.header.Get("Content-Type"), r.body)
	}
	r = br.do("GET", "/svc/account/token", "")
	wantStatus(t, r, 200)
	if r.body != "" {
		t.Errorf("token body = %q, want empty", r.body)
	}
	if tt := cookieHeader(r.header, "SVCAuthTT"); !strings.Contains(tt, "Path=/") || !strings.Contains(tt, "HttpOnly") {
		t.Errorf("TT cookie = %q", tt)
	}
	wantStatus(t, br.do("GET", login["profile"].(string), ""), 200)
}

func cookieHeader(h http.Header, name string) string {
	for _, c := range h.Values("Set-Cookie") {
		if strings.HasPrefix(c, name+"=") {
			return c
		}
	}
	return ""
}

func TestNoCookiesGetSSTChallenge(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	for _, path := range []string{"/svc/account/token", "/svc/projects/abc", "/svc/account/profile/current"} {
		r := br.do("GET", path, "")
		wantStatus(t, r, 401)
		if got := r.header.Get("WWW-Authenticate"); got != "Service cookie=SVCAuthSST" {
			t.Errorf("%s: WWW-Authenticate = %q", path, got)
		}
	}
}

func TestTemporaryTokenExpiresAndIsRenewed(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	wantStatus(t, br.do("GET", "/svc/account/profile/current", ""), 307)

	b.Clock.Advance(9 * time.Minute)
	wantStatus(t, br.do("GET", "/svc/account/profile/current", ""), 307)
	b.Clock.Advance(time.Minute)
	r := br.do("GET", "/svc/account/profile/current", "")
	wantStatus(t, r, 401)
	if got := r.header.Get("WWW-Authenticate"); got != "Service cookie=SVCAuthTT" {
		t.Fatalf("expired TT: WWW-Authenticate = %q", got)
	}
	wantStatus(t, br.do("GET", "/svc/account/token", ""), 200)
	wantStatus(t, br.do("GET", "/svc/account/profile/current", ""), 307)
}

func TestNewerTTDoesNotInvalidateOlder(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	first := newBrowser(t, b.URL, "ua")
	first.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	// A second browser sharing the same SST gets its own TT.
	second := newBrowser(t, b.URL, "ua")
	second.hc.Jar.SetCookies(mustURL(t, b.URL), first.hc.Jar.Cookies(mustURL(t, b.URL)))
	wantStatus(t, second.do("GET", "/svc/account/token", ""), 200)
	if tt(first) == tt(second) {
		t.Fatal("second token request returned the same TT")
	}
	wantStatus(t, first.do("GET", "/svc/account/profile/current", ""), 307)
	wantStatus(t, second.do("GET", "/svc/account/profile/current", ""), 307)
}

func TestSSTExpiryNeedsNewLogin(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	b.Clock.Advance(14*24*time.Hour + time.Second)
	for _, path := range []string{"/svc/account/profile/current", "/svc/account/token"} {
		r := br.do("GET", path, "")
		wantStatus(t, r, 401)
		if got := r.header.Get("WWW-Authenticate"); got != "Service cookie=SVCAuthSST" {
			t.Errorf("%s: WWW-Authenticate = %q", path, got)
		}
	}
}

func TestTokenNeedsTheLoginUserAgent(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "agent-at-login")
	wantStatus(t, br.login(b.Config.AdminLogin, apptest.AdminPassword), 200)
	br.ua = "another-agent"
	r := br.do("GET", "/svc/account/token", "")
	wantStatus(t, r, 401)
	if got := r.header.Get("WWW-Authenticate"); got != "Service cookie=SVCAuthSST" {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	br.ua = "agent-at-login"
	wantStatus(t, br.do("GET", "/svc/account/token", ""), 200)
}

func TestLogoutRevokesSessionAndTokens(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	r := br.login(b.Config.AdminLogin, apptest.AdminPassword)
	state := r.json(t)["userLogin"].(map[string]any)["state"].(string)
	wantStatus(t, br.do("GET", "/svc/account/token", ""), 200)
	cookies := br.hc.Jar.Cookies(mustURL(t, b.URL))

	wantStatus(t, br.do("DELETE", state, ""), 204)

	// Replaying the old cookies must not work: the server revoked them.
	replay := newBrowser(t, b.URL, "ua")
	replay.hc.Jar.SetCookies(mustURL(t, b.URL), cookies)
	r = replay.do("GET", "/svc/account/profile/current", "")
	wantStatus(t, r, 401)
	if got := r.header.Get("WWW-Authenticate"); got != "Service cookie=SVCAuthSST" {
		t.Errorf("after logout: WWW-Authenticate = %q", got)
	}
	wantStatus(t, replay.do("GET", "/svc/account/token", ""), 401)
	// Another session of the same user is untouched.
	if err := b.Admin.Do(context.Background(), "GET", b.AdminProfile, nil, nil); err != nil {
		t.Errorf("other session: %v", err)
	}
}

func TestYAMLResponses(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	r := br.do("POST", "/svc/account/login",
		`{"postUserLogin":{"login":"`+b.Config.AdminLogin+`","password":"`+apptest.AdminPassword+`","remember":0}}`,
		"Accept", "application/yaml")
	wantStatus(t, r, 200)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/yaml") {
		t.Fatalf("Content-Type = %q", r.header.Get("Content-Type"))
	}
	var got struct {
		UserLogin struct{ Profile, State string } `yaml:"userLogin"`
	}
	if err := yaml.Unmarshal([]byte(r.body), &got); err != nil || got.UserLogin.Profile != b.AdminProfile {
		t.Fatalf("YAML login = %+v (%v)\n%s", got, err, r.body)
	}
	wantStatus(t, br.do("GET", "/svc/account/token", ""), 200)
	r = br.do("GET", b.AdminProfile, "", "Accept", "application/yaml")
	wantStatus(t, r, 200)
	var prof struct {
		AccountSetting struct {
			Login    string  `yaml:"login"`
			Timezone *string `yaml:"timezone"`
		} `yaml:"accountSetting"`
	}
	if err := yaml.Unmarshal([]byte(r.body), &prof); err != nil || prof.AccountSetting.Login != b.Config.AdminLogin {
		t.Fatalf("YAML profile = %+v (%v)\n%s", prof, err, r.body)
	}
	// Errors come as YAML too.
	r = br.do("GET", "/svc/projects/nope", "", "Accept", "application/yaml")
	wantStatus(t, r, 404)
	var e struct {
		Error struct {
			ErrorClass string `yaml:"errorClass"`
		} `yaml:"error"`
	}
	if err := yaml.Unmarshal([]byte(r.body), &e); err != nil || e.Error.ErrorClass != "NotFound" {
		t.Fatalf("YAML error = %+v (%v)\n%s", e, err, r.body)
	}
}

func TestFailedLoginsAreSlowedDownNotLockedOut(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	for i := range 5 {
		r := br.login(b.Config.AdminLogin, "wrong-password")
		wantStatus(t, r, 401)
		if e := r.errorBody(t); e["message"] != "Bad Login or Password!" || e["component"] != "Account" {
			t.Fatalf("attempt %d: error = %v", i, e)
		}
	}
	// The fifth failure starts a 1 s wait; attempts meanwhile get 429, even with the right password.
	r := br.login(b.Config.AdminLogin, apptest.AdminPassword)
	wantStatus(t, r, 429)
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	b.Clock.Advance(time.Second)
	wantStatus(t, br.login(b.Config.AdminLogin, "wrong-again"), 401)
	r = br.login(b.Config.AdminLogin, apptest.AdminPassword)
	wantStatus(t, r, 429)
	if r.header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After after 6 failures = %q, want 2", r.header.Get("Retry-After"))
	}
	// The wait never grows past the cap: the real user gets in after it.
	for range 20 {
		b.Clock.Advance(time.Hour)
		br.login(b.Config.AdminLogin, "wrong")
	}
	b.Clock.Advance(15 * time.Minute)
	wantStatus(t, br.login(b.Config.AdminLogin, apptest.AdminPassword), 200)
	// Success resets the count.
	wantStatus(t, br.login(b.Config.AdminLogin, "wrong"), 401)
	wantStatus(t, br.login(b.Config.AdminLogin, apptest.AdminPassword), 200)
}

func TestClientRenewsTokensAndLogsInAgain(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	ctx := context.Background()
	c := b.Client("go-client")
	if _, err := c.Login(ctx, b.Config.AdminLogin, apptest.AdminPassword); err != nil {
		t.Fatal(err)
	}
	tokensBefore := strings.Count(b.Log.String(), `route="GET /svc/account/token"`)
	b.Clock.Advance(11 * time.Minute)
	// Concurrent requests after TT expiry share one refresh.
	errs := make(chan error, 8)
	for range 8 {
		go func() { _, err := c.Projects(ctx, b.AdminProfile); errs <- err }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(b.Log.String(), `route="GET /svc/account/token"`) - tokensBefore; n != 1 {
		t.Errorf("%d token requests for 8 concurrent requests, want 1", n)
	}
	b.Clock.Advance(15 * 24 * time.Hour)
	if _, err := c.Projects(ctx, b.AdminProfile); err != nil {
		t.Fatalf("after SST expiry: %v", err)
	}
	// Without credentials the client reports that it is logged out.
	res, err := c.Login(ctx, b.Config.AdminLogin, apptest.AdminPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Logout(ctx, res.Profile); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Projects(ctx, b.AdminProfile); !errors.Is(err, client.ErrLoggedOut) {
		t.Fatalf("after logout: %v, want ErrLoggedOut", err)
	}
}

func TestStartsQuicklyAndSaysHowToLogIn(t *testing.T) {
	// Not parallel: it holds the start to a time, which other tests would share the CPUs of.
	start := time.Now()
	b := apptest.Start(t)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("start took %s", d)
	}
	out := b.Stdout.String()
	for _, want := range []string{"listening on " + b.URL, "/svc/account/login", b.Config.AdminLogin} {
		if !strings.Contains(out, want) {
			t.Errorf("start-up output lacks %q:\n%s", want, out)
		}
	}
}
