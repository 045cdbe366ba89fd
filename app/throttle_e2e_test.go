package app_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
)

// loginFrom logs in as a client at addr behind the trusted proxy.
func loginFrom(br *browser, addr, login, password string) reply {
	br.t.Helper()
	return br.do("POST", "/svc/account/login",
		`{"postUserLogin":{"login":"`+login+`","password":"`+password+`","remember":0}}`, "X-Forwarded-For", addr)
}

// TestThrottleAdmitsOneAttemptAtATime locks a login out, lets the wait pass and fires 40
// wrong attempts at once: one is checked, the others wait. Checking the wait and counting
// the failure are one step.
func TestThrottleAdmitsOneAttemptAtATime(t *testing.T) {
	gate.Parallel(t)
	// The production cost makes a password check take as long as it does in production,
	// which is the window the attempts race in.
	b := apptest.Start(t, func(c *app.Config) { c.Auth.PasswordCost = 10 })
	br := newBrowser(t, b.URL, "ua")
	for range 6 {
		br.login(b.Config.AdminLogin, "wrong")
	}
	wantStatus(t, br.login(b.Config.AdminLogin, "wrong"), 429)
	b.Clock.Advance(5 * time.Second) // the wait after six failures has passed

	const n = 40
	start := make(chan struct{})
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			statuses <- br.login(b.Config.AdminLogin, "wrong").status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[401] != 1 || count[429] != n-1 {
		t.Fatalf("40 concurrent attempts after a lockout: %v, want one checked (401) and 39 told to wait (429)", count)
	}
}

// TestLockoutIsNoWeapon: an attacker failing from one address, then from many, cannot
// keep the user out from the address she logs in from; a new address is held back once
// the login's failures pass the ceiling.
func TestLockoutIsNoWeapon(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t, func(c *app.Config) {
		c.HTTP.TrustedProxies = []string{"127.0.0.0/8"}
		c.Auth.LoginFailuresCeiling = 10
	})
	b.NewUser(t, "jane@example.com")
	const home, attacker = "198.51.100.7", "203.0.113.5"
	jane, mallory := newBrowser(t, b.URL, "ua-jane"), newBrowser(t, b.URL, "ua-mallory")
	wantStatus(t, loginFrom(jane, home, "jane@example.com", "S3cret-pass"), 200)

	for range 6 {
		loginFrom(mallory, attacker, "jane@example.com", "guess")
	}
	wantStatus(t, loginFrom(mallory, attacker, "jane@example.com", "guess"), 429)
	wantStatus(t, loginFrom(jane, home, "jane@example.com", "S3cret-pass"), 200)

	for i := range 10 { // a spray from many addresses passes the ceiling
		loginFrom(mallory, fmt.Sprintf("203.0.114.%d", i), "jane@example.com", "guess")
	}
	r := loginFrom(mallory, "203.0.115.1", "jane@example.com", "S3cret-pass")
	if r.status != 429 {
		t.Errorf("a new address past the ceiling, even with the password: %d, want 429", r.status)
	}
	wantStatus(t, loginFrom(jane, home, "jane@example.com", "S3cret-pass"), 200)

	// Without a trusted proxy, X-Forwarded-For names nobody: the peer is the client.
	b2 := apptest.Start(t)
	br := newBrowser(t, b2.URL, "ua")
	for i := range 7 {
		loginFrom(br, fmt.Sprintf("192.0.2.%d", i), b2.Config.AdminLogin, "wrong")
	}
	wantStatus(t, loginFrom(br, "192.0.2.99", b2.Config.AdminLogin, "wrong"), 429)
}

// TestLogoutEndsATokenInUse logs out while requests make a fresh temporary token's first
// uses, round after round: once the logout has answered, the token answers 401 whatever
// the interleaving was.
func TestLogoutEndsATokenInUse(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	_, uri := b.NewUser(t, "jane@example.com")
	for round := range 100 {
		br := newBrowser(t, b.URL, "ua")
		br.loginWithToken("jane@example.com", "S3cret-pass")
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				<-start
				br.do("GET", uri, "")
			})
		}
		wg.Go(func() {
			<-start
			wantStatus(t, br.do("DELETE", "/svc/account/login/"+uid(uri), ""), 204)
		})
		// The browser drops its cookies at the logout; ask with the token as it was.
		tt := ""
		for _, c := range br.hc.Jar.Cookies(mustURL(t, b.URL+"/svc/")) {
			if c.Name == "SVCAuthTT" {
				tt = c.Value
			}
		}
		if tt == "" {
			t.Fatal("no temporary token in the browser")
		}
		close(start)
		wg.Wait()
		after := newBrowser(t, b.URL, "ua")
		if r := after.do("GET", uri, "", "Cookie", "SVCAuthTT="+tt); r.status != 401 {
			t.Fatalf("round %d: the token answers %d after the logout", round, r.status)
		}
	}
}
