package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// adminGet is a GET as the domain admin, with a new temporary token first
// when the clock has moved past his: the owner may no longer read what she
// owns.
func (w *notifyWorld) adminGet(t *testing.T, path string) map[string]any {
	t.Helper()
	r := w.admin.do("GET", path, "")
	if r.status == 401 {
		wantStatus(t, w.admin.do("GET", "/svc/account/token", ""), 200)
		r = w.admin.do("GET", path, "")
	}
	wantStatus(t, r, 200)
	return r.json(t)
}

// adminRuns is the run history of a subscription as the domain admin reads
// it, newest first.
func (w *notifyWorld) adminRuns(t *testing.T, uri string) []map[string]any {
	t.Helper()
	items := w.adminGet(t, uri+"/runs")["runs"].(map[string]any)["items"].([]any)
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = it.(map[string]any)["run"].(map[string]any)
	}
	return out
}

// member sets jane's status and roles in the project, as its admin does.
func (w *notifyWorld) member(t *testing.T, status string, roles ...string) {
	t.Helper()
	uris := make([]string, len(roles))
	for i, id := range roles {
		uris[i] = `"/svc/projects/` + w.pid + `/roles/` + id + `"`
	}
	r := w.admin.do("POST", "/svc/projects/"+w.pid+"/users", `{"users":[{"user":{"content":{"status":"`+status+
		`","userRoles":[`+strings.Join(uris, ",")+`]},"links":{"self":"`+w.janeURI+`"}}}]}`)
	wantStatus(t, r, 200)
	if failed := r.json(t)["projectUsersUpdateResult"].(map[string]any)["failed"].([]any); len(failed) != 0 {
		t.Fatalf("member change failed: %v", failed)
	}
}

// TestRefusedFiresFailAndTellTheOwnerOnce: a subscription runs as its owner,
// and the decision the API takes for her is taken at every fire before any
// execution. Disabled in the project between two fires, her next run fails
// with the membership reason and she gets one notice, and no other however
// often it fires refused; with no role that executes reports, the same with
// that reason; with the report it attaches deleted, the same with the
// report's; and a subscription attaching a report she cannot read is refused
// at save, naming the field.
func TestRefusedFiresFailAndTellTheOwnerOnce(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	uri := w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.metricURI + "') gt 0"}}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"PDF"}}}
	})
	fires, failures, lastGood := 0, 0, 0
	fire := func(state, reason string, notices int) {
		t.Helper()
		fires++
		if failures = 0; state == "failed" {
			failures = fires - lastGood
		}
		w.b.Clock.Advance(5 * time.Minute)
		var run map[string]any
		waitFor(t, func() bool {
			runs := w.adminRuns(t, uri)
			if len(runs) < fires || runs[0]["state"] == "running" || runs[0]["state"] == "queued" {
				return false
			}
			run = runs[0]
			return true
		})
		if run["state"] != state || (reason != "" && run["error"] != "authorize: "+reason) {
			t.Fatalf("fire %d: run %v %q (stage %v, reason %v), want %s %q", fires, run["state"], run["error"], run["stage"],
				run["reason"], state, reason)
		}
		if state == "delivered" {
			lastGood = fires
		}
		// Rated: the subscription's health counts it, and a notice is among its deliveries.
		waitFor(t, func() bool {
			h := w.adminGet(t, uri)["subscription"].(map[string]any)["health"].(map[string]any)
			return h["failuresInARow"].(float64) == float64(failures)
		})
		run = w.adminRuns(t, uri)[0]
		if state != "failed" {
			return
		}
		var got int
		for _, d := range run["deliveries"].([]any) {
			if d.(map[string]any)["channel"] == w.channel {
				got++
			}
		}
		if got != notices {
			t.Errorf("fire %d (%s): %d notices on jane's mail channel, want %d: %v", fires, reason, got, notices, run["deliveries"])
		}
	}
	mails := func(want int, subject string) {
		t.Helper()
		waitFor(t, func() bool { return len(w.smtp.Messages()) >= want })
		msgs := w.smtp.Messages()
		if len(msgs) != want || !strings.Contains(msgs[want-1].Subject, subject) {
			t.Fatalf("%d mails, the last %q; want %d, the last about %q", len(msgs), msgs[len(msgs)-1].Subject, want, subject)
		}
	}

	fire("delivered", "", 0)
	mails(1, "Revenue alert")

	w.member(t, "DISABLED", "3")
	fire("failed", "owner is not a member of the project", 1)
	mails(2, "cannot run")
	fire("failed", "owner is not a member of the project", 0)

	w.member(t, "ENABLED", "3")
	fire("delivered", "", 0)
	w.member(t, "ENABLED")
	fire("failed", "owner may not execute reports", 1)
	fire("failed", "owner may not execute reports", 0)

	w.member(t, "ENABLED", "3")
	fire("delivered", "", 0)
	wantStatus(t, w.admin.do("DELETE", w.report, ""), 204)
	id := w.report[strings.LastIndex(w.report, "/")+1:]
	fire("failed", "report "+id+" is not readable by the owner", 1)
	mails(6, "cannot run") // three alerts, three notices

	other := strings.Replace(w.report, w.pid, strings.Repeat("0", len(w.pid)), 1)
	for _, report := range []string{w.report, other} {
		body := w.body(t, func(s map[string]any) {
			s["attachments"] = []any{map[string]any{"report": report, "formats": []any{"PDF"}}}
		})
		r := w.jane.do("POST", w.subsBase, body)
		if r.status == 401 {
			wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200)
			r = w.jane.do("POST", w.subsBase, body)
		}
		wantStatus(t, r, 400)
		if e := r.errorBody(t); !strings.Contains(fmt.Sprint(e), "subscription.attachments[0].report") {
			t.Errorf("a subscription attaching %s: %v, want the field named", report, e)
		}
	}
}

// TestRolesDecideForTheAPIAndTheEngine: the permissions of a member's roles
// are one decision, the API's and the engine's: a member who may only see
// dashboards executes a report but may not export it, through the API, and
// may not save a subscription that would export it for her.
func TestRolesDecideForTheAPIAndTheEngine(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	w.member(t, "ENABLED", "4") // dashboardOnlyRole: canExecute only
	r := w.jane.do("POST", "/svc/xtab2/executor3", `{"report_req":{"report":"`+w.report+`"}}`)
	wantStatus(t, r, 201)
	result := r.json(t)["reportResult2"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	r = w.jane.do("POST", "/svc/exporter/executor", `{"result_req":{"report":"`+result+`","format":"CSV"}}`)
	wantStatus(t, r, 403)
	if !strings.Contains(r.body, "canExportReport") {
		t.Errorf("the refused export does not say what it needs: %s", r.body)
	}
	r = w.jane.do("POST", w.subsBase, w.body(t, nil))
	wantStatus(t, r, 400)
	if e := fmt.Sprint(r.errorBody(t)); !strings.Contains(e, "subscription.attachments") || !strings.Contains(e, "export") {
		t.Errorf("a subscription that attaches a report: %s, want the attachments named", e)
	}
	w.member(t, "ENABLED", "6") // explorerRole: canExecute and canExportReport
	wantStatus(t, w.jane.do("POST", "/svc/exporter/executor", `{"result_req":{"report":"`+result+`","format":"CSV"}}`), 201)
	wantStatus(t, w.jane.do("POST", w.subsBase, w.body(t, nil)), 201)
}
