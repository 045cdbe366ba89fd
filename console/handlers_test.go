package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func wantStatus(t *testing.T, what string, a answer, status int) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d; Location %q; %.400s", what, a.status, status, a.location, a.body)
	}
}

func wantIn(t *testing.T, what string, a answer, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if !strings.Contains(a.body, s) {
			t.Errorf("%s: the page lacks %q", what, s)
		}
	}
}

// TestSignInTakesOnlyItsOwnPagesToken: a page of the console sends a browser
// without a session to the sign-in page; the form signs in only with the
// token of the page the browser was shown, and then goes where it was going.
func TestSignInTakesOnlyItsOwnPagesToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.browser()
	a := b.get(t, "/console/projects?all=1")
	wantStatus(t, "a page without a session", a, http.StatusSeeOther)
	if a.location != "/console/login?next="+url.QueryEscape("/console/projects?all=1") {
		t.Errorf("sent to %q", a.location)
	}
	page := b.get(t, "/console/login")
	wantStatus(t, "the sign-in page", page, http.StatusOK)
	form := url.Values{"login": {"jane@example.com"}, "password": {testPassword}, "next": {"/console/projects?all=1"}}

	wantStatus(t, "sign-in without a token", b.post(t, "/console/login", form), http.StatusForbidden)
	other := f.browser().get(t, "/console/login").csrf(t)
	form.Set("csrf", other)
	a = b.post(t, "/console/login", form)
	wantStatus(t, "sign-in with another browser's token", a, http.StatusForbidden)
	wantIn(t, "the refusal", a, "The form has expired or did not come from this console")

	form.Set("csrf", page.csrf(t))
	form.Set("password", "wrong")
	a = b.post(t, "/console/login", form)
	wantStatus(t, "a wrong password", a, http.StatusUnauthorized)
	wantIn(t, "the sign-in page again", a, `value="jane@example.com"`)

	form.Set("password", testPassword)
	a = b.post(t, "/console/login", form)
	wantStatus(t, "sign-in", a, http.StatusSeeOther)
	if a.location != "/console/projects?all=1" {
		t.Errorf("signed in to %q", a.location)
	}
	a = b.get(t, a.location)
	wantStatus(t, "the projects", a, http.StatusOK)
	wantIn(t, "the projects", a, "Sales", "/console/projects/"+f.pid)
}

// TestPagesRenderForASignedInUser: every page of the console draws for a
// signed-in user, with the console's security headers, and an unknown page
// is the console's 404.
func TestPagesRenderForASignedInUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.signIn(t, "jane")
	sub := consoleSub(f.pid, f.sid)
	pages := []struct {
		path  string
		texts []string
	}{
		{"/console/projects?all=1", []string{"Sales"}},
		{"/console/projects/" + f.pid, []string{"Revenue watch", "New subscription"}},
		{"/console/projects/" + f.pid + "/subscriptions/new", []string{`name="condition"`, "Jane&#39;s mail"}},
		{sub, []string{"Revenue watch", "Run history", "Jane&#39;s mail", "No runs yet"}},
		{sub + "/edit", []string{"Edit Revenue watch", `name="title"`}},
		{"/console/channels", []string{"Jane&#39;s mail"}},
		{"/console/channels/new", []string{`name="kind"`}},
		{"/console/channels/" + f.cid, []string{"Jane&#39;s mail", "jane@example.com"}},
	}
	for _, p := range pages {
		a := b.get(t, p.path)
		wantStatus(t, p.path, a, http.StatusOK)
		wantIn(t, p.path, a, p.texts...)
		if !strings.Contains(a.header.Get("Content-Security-Policy"), "default-src 'none'") || a.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", p.path, a.header)
		}
	}
	a := b.get(t, "/console/projects")
	wantStatus(t, "the one project", a, http.StatusSeeOther)
	if a.location != "/console/projects/"+f.pid {
		t.Errorf("the one project: sent to %q", a.location)
	}
	a = b.get(t, "/console/cron?expr="+url.QueryEscape("0 0 8 * * MON-FRI"))
	wantStatus(t, "cron words", a, http.StatusOK)
	if !strings.Contains(a.body, "8:00") {
		t.Errorf("cron words: %q", a.body)
	}
	wantStatus(t, "an unknown page", b.get(t, "/console/nope"), http.StatusNotFound)
	a = b.get(t, consoleSub(f.pid, "nope"))
	wantStatus(t, "an unknown subscription", a, http.StatusNotFound)
}

// TestFormsNeedTheSessionsToken: a form of a signed-in user changes nothing
// without the token of the user's session: none, another user's, or one sent
// from another site; with it, it redirects to the page with its notice.
func TestFormsNeedTheSessionsToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	jane, mallory := f.signIn(t, "jane"), f.signIn(t, "mallory")
	sub := consoleSub(f.pid, f.sid)
	token := jane.get(t, sub).csrf(t)
	foreign := mallory.get(t, "/console/channels").csrf(t)
	if foreign == token {
		t.Fatal("two sessions have one token")
	}
	for _, tc := range []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"no token", url.Values{"enabled": {"false"}}, nil},
		{"another user's token", url.Values{"enabled": {"false"}, "csrf": {foreign}}, nil},
		{"from another site", url.Values{"enabled": {"false"}, "csrf": {token}}, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		a := jane.post(t, sub+"/enabled", tc.form, tc.headers...)
		wantStatus(t, tc.name, a, http.StatusForbidden)
		if !f.enabled(t) {
			t.Fatalf("%s: the subscription was paused", tc.name)
		}
	}
	a := jane.post(t, sub+"/enabled", url.Values{"enabled": {"false"}, "csrf": {token}})
	wantStatus(t, "pause", a, http.StatusSeeOther)
	if a.location != sub+"?notice=paused" || f.enabled(t) {
		t.Fatalf("pause: sent to %q, enabled %v", a.location, f.enabled(t))
	}
	a = jane.get(t, a.location)
	wantIn(t, "the paused subscription", a, "Paused: it fires no more until you resume it.", `<span class="badge quiet">paused</span>`)

	a = jane.post(t, sub+"/enabled", url.Values{"enabled": {"true"}, "csrf": {token}})
	wantStatus(t, "resume", a, http.StatusSeeOther)
	wantIn(t, "the resumed subscription", jane.get(t, a.location), "Resumed: it fires on its schedule again.")
	a = jane.get(t, sub+"?notice="+url.QueryEscape("Your account is locked; call +1 555 0100"))
	wantIn(t, "a page with an unknown notice", a, "Revenue watch")
	if strings.Contains(a.body, `class="notice"`) || strings.Contains(a.body, "locked") {
		t.Error("a notice that is not one of the console's shows its text")
	}

	a = jane.post(t, "/console/logout", url.Values{"csrf": {token}})
	wantStatus(t, "sign out", a, http.StatusSeeOther)
	if a.location != "/console/login" {
		t.Errorf("signed out to %q", a.location)
	}
	wantStatus(t, "a page after signing out", jane.get(t, sub), http.StatusSeeOther)
	wantStatus(t, "a form with the ended session's token", jane.post(t, sub+"/enabled", url.Values{"enabled": {"false"}, "csrf": {token}}),
		http.StatusForbidden)
}

func (f *fixture) enabled(t *testing.T) bool {
	t.Helper()
	s, err := f.st.SubscriptionByID(context.Background(), f.sid)
	must(t, err)
	return s.Enabled
}

// TestSubscriptionFormSavesAndShowsErrors: the form creates a subscription
// and shows it with "Saved."; a wrong field comes back on the form with its
// message and what was typed; deleting goes back to the project with a notice.
func TestSubscriptionFormSavesAndShowsErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.signIn(t, "jane")
	newForm := "/console/projects/" + f.pid + "/subscriptions/new"
	token := b.get(t, newForm).csrf(t)
	form := url.Values{"csrf": {token}, "title": {"Daily revenue"}, "trigger_cron_0": {"0 0 9 * * *"}, "trigger_tz_0": {"Europe/Prague"},
		"condition": {"true"}, "message": {"Revenue is ${f:executeMetric('" + f.metric + "')}"}, "fire_mode": {"always"},
		"enabled": {"true"}, "channels": {"/svc/account/profile/" + f.jane + "/channelConfigurations/" + f.cid}}
	a := b.post(t, newForm, form)
	wantStatus(t, "create", a, http.StatusSeeOther)
	if !strings.HasPrefix(a.location, "/console/projects/"+f.pid+"/subscriptions/") || !strings.HasSuffix(a.location, "?notice=saved") {
		t.Fatalf("created: sent to %q", a.location)
	}
	page := b.get(t, a.location)
	wantIn(t, "the new subscription", page, "Saved.", "Daily revenue", "Europe/Prague")
	sub := strings.TrimSuffix(a.location, "?notice=saved")

	form.Set("trigger_cron_0", "every now and then")
	a = b.post(t, sub+"/edit", form)
	wantStatus(t, "a wrong schedule", a, http.StatusBadRequest)
	wantIn(t, "the form again", a, `value="every now and then"`, `aria-invalid="true"`, "Daily revenue")

	a = b.post(t, sub+"/delete", url.Values{"csrf": {token}})
	wantStatus(t, "delete", a, http.StatusSeeOther)
	if a.location != "/console/projects/"+f.pid+"?notice=subscriptionDeleted" {
		t.Fatalf("deleted: sent to %q", a.location)
	}
	page = b.get(t, a.location)
	wantIn(t, "the project", page, "Subscription deleted.")
	if strings.Contains(page.body, "Daily revenue") {
		t.Error("the deleted subscription is still listed")
	}
}

// TestChannelFormSavesAndDeletes: the channel form creates a channel and
// lists it with "Saved “<title>”.", refuses a wrong address on the form, and
// deleting it says so.
func TestChannelFormSavesAndDeletes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.signIn(t, "jane")
	token := b.get(t, "/console/channels/new").csrf(t)
	form := url.Values{"csrf": {token}, "title": {"Team mail"}, "kind": {"emailConfiguration"}, "emailConfiguration.to": {"not an address"}}
	a := b.post(t, "/console/channels/new", form)
	wantStatus(t, "a wrong address", a, http.StatusBadRequest)
	wantIn(t, "the form again", a, `value="not an address"`, `aria-invalid="true"`)

	form.Set("emailConfiguration.to", "team@example.com")
	a = b.post(t, "/console/channels/new", form)
	wantStatus(t, "create", a, http.StatusSeeOther)
	loc, err := url.Parse(a.location)
	must(t, err)
	cid := loc.Query().Get("channel")
	if loc.Path != "/console/channels" || loc.Query().Get("notice") != "channelSaved" || cid == "" {
		t.Fatalf("created: sent to %q", a.location)
	}
	wantIn(t, "the channels", b.get(t, a.location), "Saved “Team mail”.")

	a = b.post(t, "/console/channels/"+cid+"/delete", url.Values{"csrf": {token}})
	wantStatus(t, "delete", a, http.StatusSeeOther)
	page := b.get(t, a.location)
	wantIn(t, "the channels", page, "Channel deleted.")
	if strings.Contains(page.body, "Team mail") {
		t.Error("the deleted channel is still listed")
	}
}
