package app_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald/app"
)

// Twenty triggers, each once a minute, at seconds 0, 3, 6, ...: every trigger keeps the
// minimum interval on its own; together they fire every 3 s.
func TestTriggersTogetherKeepTheMinimumInterval(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	var every3s []any
	for s := 0; s < 60; s += 3 {
		every3s = append(every3s, map[string]any{"timerEvent": map[string]any{"cronExpression": fmt.Sprintf("%d * * * * *", s)}})
	}
	r := w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) { s["triggers"] = every3s }))
	wantStatus(t, r, 400)
	if e := r.errorBody(t); fmt.Sprint(e["parameters"]) != "[subscription.triggers]" ||
		!strings.Contains(e["message"].(string), "every 3s") {
		t.Fatalf("error = %v", e)
	}

	// Two zones that meet: 10:00 in Prague is 09:00 UTC in winter, 20 s before the other.
	meet := []any{
		map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 10 * * *", "timezone": "Europe/Prague"}},
		map[string]any{"timerEvent": map[string]any{"cronExpression": "20 0 9 * * *", "timezone": "UTC"}},
	}
	r = w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) { s["triggers"] = meet }))
	wantStatus(t, r, 400)

	// Morning and evening, and the same instant named twice, are fine.
	fine := []any{
		map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 * * *"}},
		map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 * * MON"}},
		map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 20 * * *"}},
	}
	wantStatus(t, w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) { s["triggers"] = fine })), 201)
}

// Quotas hold when the creates race: of 12 concurrent creates exactly the quota succeed.
func TestQuotasHoldUnderConcurrency(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Subs.MaxPerUser, c.Subs.MaxPerProject, c.Subs.MaxChannelsPerUser = 3, 4, 2
	})
	statuses := func(n int, do func() reply) map[int]int {
		var mu sync.Mutex
		got := map[int]int{}
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				r := do()
				mu.Lock()
				got[r.status]++
				mu.Unlock()
				if r.status == 409 && !strings.Contains(r.body, "Quota reached") {
					t.Errorf("409 without the quota named: %s", r.body)
				}
			})
		}
		wg.Wait()
		return got
	}
	body := w.body(t, nil)
	if got := statuses(12, func() reply { return w.jane.do("POST", w.subsBase, body) }); got[201] != 3 || got[409] != 9 {
		t.Fatalf("subscriptions per user: statuses %v, want 3×201 and 9×409", got)
	}
	r := w.jane.do("POST", w.subsBase, body)
	wantStatus(t, r, 409)
	if msg := fmt.Sprint(r.errorBody(t)["parameters"]); msg != "[3 subscriptions per user]" {
		t.Errorf("parameters = %s", msg)
	}

	// The project holds 3 of its 4; the admin's own subscription is the 4th, then none.
	adminURI := w.admin.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	adminChan := w.admin.do("POST", adminURI+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"admin@example.com"}},"meta":{"title":"Mail"}}}`)
	wantStatus(t, adminChan, 201)
	ch := adminChan.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	adminSubs := "/svc/projects/" + w.pid + "/users/" + uid(adminURI) + "/subscriptions"
	adminBody := w.body(t, func(s map[string]any) { s["channels"] = []any{ch} })
	wantStatus(t, w.admin.do("POST", adminSubs, adminBody), 201)
	r = w.admin.do("POST", adminSubs, adminBody)
	wantStatus(t, r, 409)
	if msg := fmt.Sprint(r.errorBody(t)["parameters"]); msg != "[4 subscriptions per project]" {
		t.Errorf("parameters = %s", msg)
	}

	// Jane has one channel; one more is allowed.
	chBody := `{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"jane@example.com"}},"meta":{"title":"More"}}}`
	if got := statuses(6, func() reply { return w.jane.do("POST", w.janeURI+"/channelConfigurations", chBody) }); got[201] != 1 || got[409] != 5 {
		t.Fatalf("channels per user: statuses %v, want 1×201 and 5×409", got)
	}
}

// A project admin manages the project's subscriptions but cannot make a member's channels send
// her own text: creating or changing a member's subscription is for the member or a domain admin.
func TestProjectAdminCannotSendThroughAMembersChannel(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	_, paURI := w.b.NewUser(t, "pa@example.com")
	pa := newBrowser(t, w.b.URL, "ua")
	pa.loginWithToken("pa@example.com", "S3cret-pass")
	wantStatus(t, w.admin.do("POST", "/svc/projects/"+w.pid+"/users",
		`{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/`+w.pid+`/roles/2"]},"links":{"self":"`+paURI+`"}}}`), 200)

	r := pa.do("POST", w.subsBase, w.body(t, nil))
	wantStatus(t, r, 403)
	if !strings.Contains(fmt.Sprint(r.errorBody(t)), "own channels") {
		t.Errorf("error = %v", r.errorBody(t))
	}
	r = w.jane.do("POST", w.subsBase, w.body(t, nil))
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	wantStatus(t, pa.do("PUT", uri, w.body(t, func(s map[string]any) {
		s["message"] = map[string]any{"template": map[string]any{"expression": "Call 555-0100 now"}}
	})), 403)
	wantStatus(t, pa.do("GET", uri, ""), 200)
	// The domain admin may act for the user.
	wantStatus(t, w.admin.do("PUT", uri, w.body(t, nil)), 200)
	wantStatus(t, pa.do("DELETE", uri, ""), 204)
}
