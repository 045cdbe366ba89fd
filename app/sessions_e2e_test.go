package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// postWith posts a form as c does, with the extra headers given as name, value pairs.
func (c *consoleClient) postWith(path string, form url.Values, headers ...string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, _ := c.do(req)
	return resp
}

// signedIn reports whether c holds an API session cookie.
func (c *consoleClient) signedIn() bool {
	for _, ck := range c.hc.Jar.Cookies(mustURL(c.t, c.base)) {
		if ck.Name == "SVCAuthSST" && ck.Value != "" {
			return true
		}
	}
	return false
}

// TestConsoleTokenFollowsTheSession: the console's CSRF token is bound to the signed-in
// session: it changes when the browser signs out and in again, and when another user
// signs in in the same browser, and a token of an ended session is refused.
func TestConsoleTokenFollowsTheSession(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	b.NewUser(t, "jane@example.com")
	c := newConsoleClient(t, b.URL)
	c.signIn(b.Config.AdminLogin, apptest.AdminPassword)
	first := c.csrf("/console/channels")
	if again := c.csrf("/console/projects"); again != first {
		t.Fatalf("the token changed within one session: %q, then %q", first, again)
	}
	if resp, _ := c.post("/console/logout", url.Values{"csrf": {first}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if login := c.csrf("/console/login"); login == first {
		t.Errorf("the sign-in page's token is the ended session's")
	}

	c.signIn(b.Config.AdminLogin, apptest.AdminPassword)
	second := c.csrf("/console/channels")
	if second == first {
		t.Errorf("the token is the same after signing out and in again: %q", first)
	}
	if resp, _ := c.post("/console/logout", url.Values{"csrf": {first}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form with the token of the session that ended: %d, want 403", resp.StatusCode)
	}
	if resp, _ := c.get("/console/channels"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the refused form signed the browser out: %d", resp.StatusCode)
	}

	if resp, _ := c.post("/console/logout", url.Values{"csrf": {second}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	c.signIn("jane@example.com", "S3cret-pass")
	third := c.csrf("/console/channels")
	if third == first || third == second {
		t.Errorf("another user in the same browser has a token of an earlier session")
	}
	for _, old := range []string{first, second} {
		if resp, _ := c.post("/console/channels/new", url.Values{"csrf": {old}, "kind": {"emailConfiguration"},
			"title": {"Planted"}, "emailConfiguration.to": {"attacker@example.com"}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("jane's browser took a form with the admin's token: %d, want 403", resp.StatusCode)
		}
	}
}

// TestPlantedSignInCookieSignsNobodyIn: an attacker's own sign-in cookie and token,
// planted in a victim's browser (as a sibling site can), do not sign the victim into
// the attacker's account: a form sent from another site, same-site or cross-site, is
// refused, and once the victim's browser showed the sign-in page, its fresh cookie
// voids the planted token, even where the planted cookie, set for a longer path,
// still comes first.
func TestPlantedSignInCookieSignsNobodyIn(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	b.NewUser(t, "mallory@example.com")
	attacker := newConsoleClient(t, b.URL)
	token := attacker.csrf("/console/login")
	page := mustURL(t, b.URL+"/console/login")
	planted := attacker.hc.Jar.Cookies(page)
	if len(planted) == 0 {
		t.Fatal("the sign-in page set no cookie")
	}
	form := url.Values{"csrf": {token}, "login": {"mallory@example.com"}, "password": {"S3cret-pass"}}

	for _, site := range []string{"same-site", "cross-site"} {
		victim := newConsoleClient(t, b.URL)
		victim.hc.Jar.SetCookies(page, planted)
		if resp := victim.postWith("/console/login", form, "Sec-Fetch-Site", site); resp.StatusCode != http.StatusForbidden || victim.signedIn() {
			t.Errorf("a sign-in form from a %s page with planted cookies: %d, signed in: %v; want 403", site, resp.StatusCode, victim.signedIn())
		}
	}
	for _, path := range []string{"/", "/console/login"} {
		victim := newConsoleClient(t, b.URL)
		victim.hc.Jar.SetCookies(mustURL(t, b.URL+path), planted)
		victim.get("/console/login")
		if resp := victim.postWith("/console/login", form); resp.StatusCode != http.StatusForbidden || victim.signedIn() {
			t.Errorf("the token of a cookie planted at %s, after the sign-in page was shown: %d, signed in: %v; want 403",
				path, resp.StatusCode, victim.signedIn())
		}
	}
	// The page's own form signs in, from the page itself.
	newConsoleClient(t, b.URL).signIn("mallory@example.com", "S3cret-pass")
}

// TestCrossSiteRequestsChangeNothing: a state-changing request that a browser marks
// Sec-Fetch-Site: cross-site is refused by the API and the console; reads, and requests
// from the site itself or from programs (no such header), are served.
func TestCrossSiteRequestsChangeNothing(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	const project = `{"project":{"meta":{"title":"T"}}}`
	r := br.do("POST", "/svc/projects/", project, "Sec-Fetch-Site", "cross-site")
	if r.status != 403 || !strings.Contains(r.body, "Sec-Fetch-Site") {
		t.Errorf("a cross-site POST: %d %s, want 403 naming Sec-Fetch-Site", r.status, r.body)
	}
	if r := br.do("DELETE", "/svc/account/login/"+uid(b.AdminProfile), "", "Sec-Fetch-Site", "cross-site"); r.status != 403 {
		t.Errorf("a cross-site DELETE: %d, want 403", r.status)
	}
	if r := br.login(b.Config.AdminLogin, apptest.AdminPassword); r.status != 200 {
		t.Fatalf("login: %d", r.status)
	}
	r = br.do("POST", "/svc/account/login", `{"postUserLogin":{"login":"`+b.Config.AdminLogin+`","password":"`+apptest.AdminPassword+`"}}`,
		"Sec-Fetch-Site", "cross-site")
	if r.status != 403 {
		t.Errorf("a cross-site login: %d, want 403", r.status)
	}
	wantStatus(t, br.do("GET", "/svc/account/token", ""), 200)
	wantStatus(t, br.do("GET", b.AdminProfile, "", "Sec-Fetch-Site", "cross-site"), 200)
	for _, site := range []string{"same-origin", "same-site", "none", ""} {
		wantStatus(t, br.do("POST", "/svc/projects/", project, "Sec-Fetch-Site", site), 201)
	}

	c := newConsoleClient(t, b.URL)
	c.signIn(b.Config.AdminLogin, apptest.AdminPassword)
	tok := c.csrf("/console/channels")
	for _, site := range []string{"cross-site", "same-site"} {
		if resp := c.postWith("/console/logout", url.Values{"csrf": {tok}}, "Sec-Fetch-Site", site); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a console form from a %s page: %d, want 403", site, resp.StatusCode)
		}
	}
	if resp := c.postWith("/console/logout", url.Values{"csrf": {tok}}, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the console's own form: %d, want 303", resp.StatusCode)
	}
}
