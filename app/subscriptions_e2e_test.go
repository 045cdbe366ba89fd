package app_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// subWorld is a project with a member who has a channel.
type subWorld struct {
	b                 *apptest.Bundle
	admin, jane       *browser
	pid, janeURI      string
	channel, subsBase string
	metricURI, report string // a metric and a report of the project
}

func newSubWorld(t *testing.T) *subWorld { return newSubWorldWith(t) }

func newSubWorldWith(t *testing.T, opts ...apptest.Option) *subWorld {
	b := apptest.Start(t, opts...)
	w := &subWorld{b: b, admin: newBrowser(t, b.URL, "ua"), jane: newBrowser(t, b.URL, "ua")}
	w.admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	_, w.janeURI = b.NewUser(t, "jane@example.com")
	w.jane.loginWithToken("jane@example.com", "S3cret-pass")
	r := w.admin.do("POST", "/svc/projects/", `{"project":{"meta":{"title":"Sales"}}}`)
	w.pid = strings.TrimPrefix(r.json(t)["uri"].(string), "/svc/projects/")
	wantStatus(t, w.admin.do("POST", "/svc/projects/"+w.pid+"/users",
		`{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/`+w.pid+`/roles/3"]},"links":{"self":"`+w.janeURI+`"}}}`), 200)
	r = w.jane.do("POST", w.janeURI+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"jane@example.com"}},"meta":{"title":"Mail"}}}`)
	wantStatus(t, r, 201)
	w.channel = r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	w.subsBase = "/svc/projects/" + w.pid + "/users/" + uid(w.janeURI) + "/subscriptions"
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.manage(salesMAQL), 200)
	w.metricURI = m.create(metricJSON("Amount", "SELECT SUM({fact.sales.amount})"))
	def := m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Amount"},
		"content": map[string]any{"format": "grid", "grid": map[string]any{"rows": []any{}, "columns": []any{"metricGroup"},
			"metrics": []any{map[string]any{"uri": w.metricURI, "alias": ""}}}}}}))
	w.report = m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Amount report"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
	return w
}

// body returns a valid subscription with the given fields replaced.
func (w *subWorld) body(t *testing.T, change func(sub map[string]any)) string {
	sub := map[string]any{
		"triggers":    []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 * * MON-FRI", "timezone": "Europe/Prague"}}},
		"condition":   map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.metricURI + "') lt 16"}},
		"message":     map[string]any{"template": map[string]any{"expression": "Revenue fell to ${f:executeMetric('" + w.metricURI + "')}"}},
		"subject":     map[string]any{"template": map[string]any{"expression": "Revenue alert"}},
		"channels":    []any{w.channel},
		"attachments": []any{map[string]any{"report": w.report, "formats": []any{"pdf", "XLS"}}},
		"meta":        map[string]any{"title": "Revenue watch"},
	}
	if change != nil {
		change(sub)
	}
	data, err := json.Marshal(map[string]any{"subscription": sub})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSubscriptionLifecycle(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	r := w.jane.do("POST", w.subsBase, w.body(t, nil))
	wantStatus(t, r, 201)
	sub := r.json(t)["subscription"].(map[string]any)
	meta := sub["meta"].(map[string]any)
	uri := meta["uri"].(string)
	if !strings.HasPrefix(uri, w.subsBase+"/") || meta["category"] != "subscription" || meta["author"] != w.janeURI {
		t.Fatalf("meta = %v", meta)
	}
	if sub["fireMode"] != "always" || sub["enabled"] != true {
		t.Errorf("defaults: fireMode %v enabled %v", sub["fireMode"], sub["enabled"])
	}
	att := sub["attachments"].([]any)[0].(map[string]any)
	if fmt.Sprint(att["formats"]) != "[PDF XLS]" {
		t.Errorf("formats = %v", att["formats"])
	}
	tz := sub["triggers"].([]any)[0].(map[string]any)["timerEvent"].(map[string]any)["timezone"]
	if tz != "Europe/Prague" {
		t.Errorf("timezone = %v", tz)
	}
	got := w.jane.do("GET", uri, "")
	wantStatus(t, got, 200)
	if got.body != r.body {
		t.Errorf("GET differs from POST:\n%s\n%s", got.body, r.body)
	}

	// Pause it, switch to onChange; the default time zone fills in.
	put := w.body(t, func(s map[string]any) {
		s["enabled"] = false
		s["fireMode"] = "onChange"
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
	})
	r = w.jane.do("PUT", uri, put)
	wantStatus(t, r, 200)
	sub = r.json(t)["subscription"].(map[string]any)
	if sub["enabled"] != false || sub["fireMode"] != "onChange" ||
		sub["triggers"].([]any)[0].(map[string]any)["timerEvent"].(map[string]any)["timezone"] != "UTC" {
		t.Errorf("after PUT = %v", sub)
	}
	list := w.jane.do("GET", w.subsBase, "")
	if items := list.json(t)["subscriptions"].(map[string]any)["items"].([]any); len(items) != 1 {
		t.Fatalf("%d subscriptions listed", len(items))
	}
	// The channel is in use: it cannot be deleted.
	r = w.jane.do("DELETE", w.channel, "")
	wantStatus(t, r, 409)

	// Preview evaluates now and sends nothing: no data is loaded, so the
	// metric has no value and the condition does not hold.
	r = w.jane.do("POST", uri+"/preview", "")
	wantStatus(t, r, 200)
	pv := r.json(t)["preview"].(map[string]any)
	if pv["condition"] != false || pv["wouldSend"] != false || pv["text"] != "Revenue fell to (no value)" ||
		len(pv["channels"].([]any)) != 1 || pv["values"].(map[string]any)[w.metricURI] != nil {
		t.Errorf("preview = %v", pv)
	}

	wantStatus(t, w.jane.do("DELETE", uri, ""), 204)
	wantStatus(t, w.jane.do("GET", uri, ""), 404)
	wantStatus(t, w.jane.do("DELETE", w.channel, ""), 204)
}

func TestSubscriptionAccess(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	r := w.jane.do("POST", w.subsBase, w.body(t, nil))
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)

	// Another member of the project (an editor) sees nothing of Jane's.
	joe := newBrowser(t, w.b.URL, "ua")
	_, joeURI := w.b.NewUser(t, "joe@example.com")
	joe.loginWithToken("joe@example.com", "S3cret-pass")
	wantStatus(t, w.admin.do("POST", "/svc/projects/"+w.pid+"/users",
		`{"user":{"content":{"userRoles":["/svc/projects/`+w.pid+`/roles/5"]},"links":{"self":"`+joeURI+`"}}}`), 200)
	for _, req := range [][2]string{{"GET", w.subsBase}, {"GET", uri}, {"PUT", uri}, {"DELETE", uri}, {"POST", w.subsBase}} {
		wantStatus(t, joe.do(req[0], req[1], w.body(t, nil)), 404)
	}
	// Joe cannot use Jane's channel in his own subscription.
	joeSubs := "/svc/projects/" + w.pid + "/users/" + uid(joeURI) + "/subscriptions"
	r = joe.do("POST", joeSubs, w.body(t, nil))
	wantStatus(t, r, 400)
	if p := r.errorBody(t)["parameters"].([]any)[0]; p != "subscription.channels[0]" {
		t.Errorf("parameter = %v", p)
	}
	// The domain admin (and a project admin) may manage Jane's subscriptions.
	wantStatus(t, w.admin.do("GET", uri, ""), 200)
	// A user who is not a member cannot have subscriptions in the project.
	_, annURI := w.b.NewUser(t, "ann@example.com")
	r = w.admin.do("POST", "/svc/projects/"+w.pid+"/users/"+uid(annURI)+"/subscriptions", w.body(t, nil))
	wantStatus(t, r, 403)
	// Disabled members keep their subscriptions visible but cannot change them.
	wantStatus(t, w.admin.do("POST", "/svc/projects/"+w.pid+"/users",
		`{"users":[{"user":{"content":{"status":"DISABLED"},"links":{"self":"`+w.janeURI+`"}}}]}`), 200)
	wantStatus(t, w.admin.do("GET", uri, ""), 200)
	wantStatus(t, w.admin.do("PUT", uri, w.body(t, nil)), 403)
	wantStatus(t, w.jane.do("GET", uri, ""), 404)
}

func TestSubscriptionValidation(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	trig := func(cron string) func(map[string]any) {
		return func(s map[string]any) {
			s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": cron}}}
		}
	}
	set := func(key string, v any) func(map[string]any) { return func(s map[string]any) { s[key] = v } }
	cond := func(expr string) func(map[string]any) {
		return set("condition", map[string]any{"condition": map[string]any{"expression": expr}})
	}
	msg := func(expr string) func(map[string]any) {
		return set("message", map[string]any{"template": map[string]any{"expression": expr}})
	}
	const cronPath = "subscription.triggers[0].timerEvent.cronExpression"
	cases := []struct {
		name    string
		change  func(map[string]any)
		param   string
		message string
	}{
		{"no title", set("meta", map[string]any{}), "subscription.meta.title", "is required"},
		{"no triggers", set("triggers", []any{}), "subscription.triggers", "at least one"},
		{"five cron fields", trig("0 8 * * MON"), cronPath, "6 fields"},
		{"out of range", trig("0 0 25 * * *"), cronPath, "out of range"},
		{"never fires", trig("0 0 0 30 2 *"), cronPath, "never occurs in February"},
		{"too often", trig("*/10 * * * * *"), cronPath, "shortest interval allowed is 1m0s"},
		{"bad timezone", set("triggers", []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 * * *", "timezone": "Mars/Base"}}}),
			"subscription.triggers[0].timerEvent.timezone", "IANA"},
		{"no condition", set("condition", nil), "subscription.condition.condition.expression", "is required"},
		{"condition not boolean", cond("f:executeMetric('" + w.metricURI + "') + 1"), "subscription.condition.condition.expression", "true or false"},
		{"condition syntax", cond("f:executeMetric('" + w.metricURI + "') <"), "subscription.condition.condition.expression", "offset"},
		{"unknown word", cond("revenue > 3"), "subscription.condition.condition.expression", "revenue"},
		{"foreign metric", cond("f:executeMetric('/svc/md/otherproject/obj/1') > 3"), "subscription.condition.condition.expression", "another project"},
		{"not a metric URI", cond("f:executeMetric('12') > 3"), "subscription.condition.condition.expression", "not a metric URI"},
		{"no such metric", cond("f:executeMetric('/svc/md/" + w.pid + "/obj/99999') > 3"), "subscription.condition.condition.expression", "names no metric"},
		{"a report is no metric", cond("f:executeMetric('" + w.report + "') > 3"), "subscription.condition.condition.expression", "names no metric"},
		{"attachment is a metric", set("attachments", []any{map[string]any{"report": w.metricURI, "formats": []any{"PDF"}}}),
			"subscription.attachments[0].report", "names no report"},
		{"no message", set("message", nil), "subscription.message.template.expression", "is required"},
		{"unterminated template", msg("Revenue ${f:executeMetric('" + w.metricURI + "')"), "subscription.message.template.expression", "${"},
		{"subject with foreign metric", set("subject", map[string]any{"template": map[string]any{"expression": "${f:executeMetric('/svc/md/x/obj/1')}"}}),
			"subscription.subject.template.expression", "another project"},
		{"no channels", set("channels", []any{}), "subscription.channels", "at least one"},
		{"bad channel URI", set("channels", []any{"/svc/x"}), "subscription.channels[0]", "channel configuration URI"},
		{"unknown channel", set("channels", []any{w.janeURI + "/channelConfigurations/000000000000000000000000"}), "subscription.channels[0]", "names no channel"},
		{"channel twice", set("channels", []any{w.channel, w.channel}), "subscription.channels[1]", "twice"},
		{"attachment of other project", set("attachments", []any{map[string]any{"report": "/svc/md/zzz/obj/1", "formats": []any{"PDF"}}}),
			"subscription.attachments[0].report", "this project"},
		{"attachment bad format", set("attachments", []any{map[string]any{"report": w.report, "formats": []any{"DOCX"}}}),
			"subscription.attachments[0].formats[0]", "one of PDF"},
		{"bad fire mode", set("fireMode", "sometimes"), "subscription.fireMode", "always or onChange"},
		{"unknown field", set("priority", 1), "subscription.priority", "Unknown field"},
		{"wrong type", set("enabled", "yes"), "subscription.enabled", "true or false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := w.jane.do("POST", w.subsBase, w.body(t, tc.change))
			wantStatus(t, r, 400)
			e := r.errorBody(t)
			params := e["parameters"].([]any)
			if len(params) == 0 || params[0] != tc.param {
				t.Errorf("parameters = %v, want %s", params, tc.param)
			}
			if msg := fmt.Sprintf(e["message"].(string), params...); !strings.Contains(msg, tc.message) {
				t.Errorf("message %q lacks %q", msg, tc.message)
			}
		})
	}
	// Nothing was stored.
	if items := w.jane.do("GET", w.subsBase, "").json(t)["subscriptions"].(map[string]any)["items"].([]any); len(items) != 0 {
		t.Errorf("%d subscriptions stored by bad requests", len(items))
	}
}
