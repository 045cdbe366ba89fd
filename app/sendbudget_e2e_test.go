package app_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
)

// sendNowSubscriptions creates n subscriptions of jane's that only send now
// mails without attachments, and returns their URIs.
func sendNowSubscriptions(t *testing.T, w *subWorld, n int) []string {
	t.Helper()
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 1 1 *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	})
	uris := make([]string, n)
	for i := range uris {
		r := w.jane.do("POST", w.subsBase, body)
		wantStatus(t, r, 201)
		uris[i] = r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	}
	return uris
}

// TestSendNowBudgetPerOwner: spread over 50 subscriptions, each sent now
// twice, one owner's 61st send on demand in an hour is 429 with a
// Retry-After that runs to an hour after the first; a channel test counts
// against the same budget; an hour after the first send, sends go again.
func TestSendNowBudgetPerOwner(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	subs := sendNowSubscriptions(t, w, 50)
	start := w.b.Clock.Now()
	sent := 0
	for round := range 2 {
		for _, uri := range subs {
			if sent == 60 {
				break
			}
			wantStatus(t, w.jane.do("POST", uri+"/send", ""), 202)
			sent++
		}
		if round == 0 {
			w.b.Clock.Advance(10 * time.Second) // past subscriptions.sendNowEvery
		}
	}
	r := w.jane.do("POST", subs[10]+"/send", "")
	wantStatus(t, r, 429)
	wait := start.Add(time.Hour).Sub(w.b.Clock.Now())
	if ra := r.header.Get("Retry-After"); ra != strconv.Itoa(int(wait.Seconds())) {
		t.Errorf("Retry-After = %q, want %d", ra, int(wait.Seconds()))
	}
	if e := r.errorBody(t); !strings.Contains(e["message"].(string), "Send budget spent") ||
		!strings.Contains(strings.Join(toStrings(e["parameters"]), " "), "60 per user") {
		t.Errorf("error = %v", e)
	}
	r = w.jane.do("POST", w.channel+"/test", "")
	wantStatus(t, r, 429)
	if r.header.Get("Retry-After") == "" {
		t.Error("the channel test's 429 has no Retry-After")
	}

	w.b.Clock.Advance(wait)
	wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200)
	wantStatus(t, w.jane.do("POST", subs[10]+"/send", ""), 202)
}

// TestSendNowBudgetPerProject: with subscriptions.projectSendNowPerHour 3,
// two owners of one project share three sends now an hour; the fourth is
// 429 naming the project's budget, while a channel test, which belongs to
// no project, still goes.
func TestSendNowBudgetPerProject(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) { c.Subs.ProjectSendNowPerHour = 3 })
	subs := sendNowSubscriptions(t, w, 3)
	for _, uri := range subs[:2] {
		wantStatus(t, w.jane.do("POST", uri+"/send", ""), 202)
	}
	adminURI := w.admin.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	r := w.admin.do("POST", adminURI+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"admin@example.com"}},"meta":{"title":"Mail"}}}`)
	wantStatus(t, r, 201)
	adminChannel := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	r = w.admin.do("POST", "/svc/projects/"+w.pid+"/users/"+uid(adminURI)+"/subscriptions", w.body(t, func(s map[string]any) {
		s["channels"] = []any{adminChannel}
		delete(s, "attachments")
	}))
	wantStatus(t, r, 201)
	adminSub := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	wantStatus(t, w.admin.do("POST", adminSub+"/send", ""), 202)

	r = w.jane.do("POST", subs[2]+"/send", "")
	wantStatus(t, r, 429)
	if e := r.errorBody(t); !strings.Contains(strings.Join(toStrings(e["parameters"]), " "), "3 per project") ||
		r.header.Get("Retry-After") != "3600" {
		t.Errorf("error = %v, Retry-After %q", e, r.header.Get("Retry-After"))
	}
	wantStatus(t, w.jane.do("POST", w.channel+"/test", ""), 200)
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return out
}

// TestSendBudgetOutlivesAKill: the sends on demand of the hour are counted
// in the database, so that a process killed with SIGKILL and started again
// on its folder refuses the send now its owner's budget no longer has, as
// the process before it would have.
func TestSendBudgetOutlivesAKill(t *testing.T) {
	gate.Parallel(t)
	if testing.Short() {
		t.Skip("kills the herald binary")
	}
	smtp := channeltest.NewSMTPServer(t)
	dir := t.TempDir()
	env := []string{"HERALD_SMTP_HOST=" + smtp.Host(), fmt.Sprintf("HERALD_SMTP_PORT=%d", smtp.Port()),
		"HERALD_SMTP_TLSPOLICY=none", "HERALD_SMTP_FROM=alerts@herald.test", "HERALD_SUBSCRIPTIONS_SENDNOWPERHOUR=2",
		"HERALD_LOG_ACCESS=off", "HERALD_LOG_LEVEL=warn"}
	p := apptest.StartProcess(t, dir, env...)
	admin := newBrowserAs(t, p.URL)
	subs := make([]string, 3)
	for i := range subs {
		subs[i] = createSubscription(t, admin, fmt.Sprintf("S%d", i))
	}
	for _, sub := range subs[:2] {
		wantStatus(t, admin.do("POST", sub+"/send", ""), 202)
	}

	p.Kill()
	p = apptest.StartProcess(t, dir, env...)
	admin = newBrowserAs(t, p.URL)
	r := admin.do("POST", subs[2]+"/send", "")
	wantStatus(t, r, 429)
	if e := r.errorBody(t); !strings.Contains(e["message"].(string), "Send budget spent") {
		t.Errorf("error = %v", e)
	}
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 3000 || ra > 3600 {
		t.Errorf("Retry-After = %q, want the rest of the hour since the first send", r.header.Get("Retry-After"))
	}
}
