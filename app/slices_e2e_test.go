package app_test

import (
	"encoding/csv"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channeltest"
)

// subscribe creates a subscription of the admin's in the project with the
// given fields over a per-minute one that mails the revenue and the revenue
// by region as CSV, and returns its URI and status.
func (w *permWorld) subscribe(t *testing.T, status int, fields map[string]any) string {
	t.Helper()
	sub := map[string]any{
		"triggers":    []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 * * * * *"}}},
		"condition":   map[string]any{"condition": map[string]any{"expression": "true"}},
		"subject":     map[string]any{"template": map[string]any{"expression": "Revenue"}},
		"message":     map[string]any{"template": map[string]any{"expression": "Revenue: ${f:executeMetric('" + w.revenue + "')}"}},
		"attachments": []any{map[string]any{"report": w.byRegion, "formats": []any{"CSV"}}},
		"meta":        map[string]any{"title": "Revenue by region"},
	}
	for k, v := range fields {
		sub[k] = v
	}
	r := w.do(t, w.admin, "POST", w.subsBase(), jsonString(map[string]any{"subscription": sub}))
	wantStatus(t, r, status)
	if status != 201 {
		return r.body
	}
	return dig(r.json(t), "subscription", "meta", "uri").(string)
}

func (w *permWorld) subsBase() string {
	return "/svc/projects/" + w.m.pid + "/users/" + uid(w.b.AdminProfile) + "/subscriptions"
}

// fire moves the clock to the next minute and waits for the subscription's
// n-th run to be final, and for mails more mails in all; it returns the run
// and the new mails by recipient.
func (w *permWorld) fire(t *testing.T, sub string, n, mails int) (map[string]any, map[string]channeltest.Email) {
	t.Helper()
	before := len(w.smtp.Messages())
	w.b.Clock.Advance(time.Minute)
	var run map[string]any
	waitFor(t, func() bool {
		items := w.do(t, w.admin, "GET", sub+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		if len(items) < n {
			return false
		}
		run = items[0].(map[string]any)["run"].(map[string]any)
		return run["state"] != "running" && run["state"] != "queued"
	})
	waitFor(t, func() bool { return len(w.smtp.Messages()) >= before+mails })
	got := map[string]channeltest.Email{}
	for _, m := range w.smtp.Messages()[before:] {
		got[strings.Join(m.To, ",")] = m
	}
	if len(got) != mails {
		t.Fatalf("run %v: %d new mails, want %d", run, len(got), mails)
	}
	return run, got
}

// csvOf returns the rows of a mail's CSV attachment.
func csvOf(t *testing.T, m channeltest.Email) [][]string {
	t.Helper()
	for _, a := range m.Attachments {
		if strings.HasSuffix(a.Name, ".csv") {
			rows, err := csv.NewReader(strings.NewReader(string(a.Data))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
	}
	t.Fatalf("mail to %v has no CSV: %v", m.To, m.Attachments)
	return nil
}

// regionMail checks that a mail carries one region's numbers and no other's:
// in the text, the HTML table and the CSV.
func regionMail(t *testing.T, m channeltest.Email, region string) {
	t.Helper()
	total := fmt.Sprintf("%.2f", regionTotals[region])
	if total == "1001.00" {
		total = "1,001.00"
	}
	if !strings.Contains(m.Text, "Revenue: "+total) {
		t.Errorf("mail to %v says %q, want the revenue of %s, %s", m.To, m.Text, region, total)
	}
	rows := csvOf(t, m)
	if len(rows) != 2 || rows[1][0] != region || rows[1][1] != fmt.Sprint(regionTotals[region]) {
		t.Errorf("mail to %v attaches %q, want only %s", m.To, rows, region)
	}
	for other := range regionTotals {
		if other != region && strings.Contains(m.HTML, ">"+other+"<") {
			t.Errorf("mail to %v shows %s in its table", m.To, other)
		}
	}
	if !strings.Contains(m.HTML, ">"+region+"<") {
		t.Errorf("mail to %v does not show %s in its table", m.To, region)
	}
}

// TestRecipientsGetTheirOwnSlice: a subscription with three members as
// recipients mails each their own region, as themselves: the text, the
// table and the CSV hold only their numbers, and each slice is executed and
// rendered once. Changing one member's filter changes what the next fire
// sends them; a member disabled in the project gets nothing more and is
// counted as skipped. Naming a user who is not a member answers 400 naming
// the field.
func TestRecipientsGetTheirOwnSlice(t *testing.T) {
	gate.Parallel(t)
	w := newPermWorld(t)
	_, dan := w.b.NewUser(t, "dan@example.com")
	users := []any{w.uris["ann"], w.uris["bob"], w.uris["cid"]}
	body := w.subscribe(t, 400, map[string]any{"recipients": map[string]any{"users": append(slices.Clone(users), dan), "via": []any{"email"}}})
	if !strings.Contains(body, "subscription.recipients.users[3]") {
		t.Errorf("a recipient who is not a member: %s", body)
	}
	sub := w.subscribe(t, 201, map[string]any{"recipients": map[string]any{"users": users, "via": []any{"email"}}})
	got := w.do(t, w.admin, "GET", sub, "").json(t)["subscription"].(map[string]any)
	if fmt.Sprint(got["recipients"]) != fmt.Sprintf("map[roles:[] users:[%s %s %s] via:[email]]", users...) ||
		fmt.Sprint(got["channels"]) != "[]" {
		t.Errorf("the subscription reads back as %v", got)
	}

	run, mails := w.fire(t, sub, 1, 3)
	for name, region := range map[string]string{"ann": "North", "bob": "East", "cid": "West"} {
		regionMail(t, mails[name+"@example.com"], region)
	}
	aud := run["audience"].(map[string]any)
	if run["state"] != "delivered" || aud["recipients"] != 3.0 || aud["slices"] != 3.0 || run["skipped"] != nil ||
		dig(run, "deliveryCounts", "sent") != 3.0 || run["deliveriesTotal"] != 3.0 {
		t.Errorf("the run: %v", run)
	}
	for _, d := range run["deliveries"].([]any) {
		dl := d.(map[string]any)
		if dl["recipient"] == nil || !strings.HasSuffix(dl["address"].(string), "@example.com") || dl["channel"] != nil {
			t.Errorf("a delivery to a recipient: %v", dl)
		}
	}
	// The run is searched by recipient.
	one := w.do(t, w.admin, "GET", run["uri"].(string)+"?recipient=bob", "").json(t)["run"].(map[string]any)
	if one["deliveriesTotal"] != 1.0 || dig(one["deliveries"].([]any)[0], "address") != "bob@example.com" {
		t.Errorf("the run searched for bob: %v", one["deliveries"])
	}
	one = w.do(t, w.admin, "GET", run["uri"].(string)+"?recipient="+w.uris["cid"], "").json(t)["run"].(map[string]any)
	if one["deliveriesTotal"] != 1.0 || dig(one["deliveries"].([]any)[0], "recipient") != w.uris["cid"] {
		t.Errorf("the run searched for cid's profile: %v", one["deliveries"])
	}

	// bob now sees the West.
	w.assign(t, map[string][]string{"bob": {w.filters["West"]}})
	_, mails = w.fire(t, sub, 2, 3)
	regionMail(t, mails["bob@example.com"], "West")
	regionMail(t, mails["ann@example.com"], "North")

	// cid is disabled: the next fire skips cid.
	wantStatus(t, w.do(t, w.admin, "POST", "/svc/projects/"+w.m.pid+"/users", `{"users":[{"user":{"content":{"status":"DISABLED"},"links":{"self":"`+
		w.uris["cid"]+`"}}}]}`), 200)
	run, mails = w.fire(t, sub, 3, 2)
	if _, ok := mails["cid@example.com"]; ok || run["skipped"] != 1.0 {
		t.Errorf("after cid was disabled: mails to %v, run %v", slices.Collect(maps.Keys(mails)), run)
	}
	if s := fmt.Sprint(dig(run, "audience", "skips")); !strings.Contains(s, w.uris["cid"]) || !strings.Contains(s, "not an enabled member") {
		t.Errorf("the skip of cid: %s", s)
	}

	// bob is deleted: the next fire mails ann alone.
	wantStatus(t, w.do(t, w.admin, "DELETE", w.uris["bob"], ""), 200)
	run, mails = w.fire(t, sub, 4, 1)
	if _, ok := mails["ann@example.com"]; !ok || run["skipped"] != 2.0 {
		t.Errorf("after bob was deleted: mails to %v, run skipped %v", slices.Collect(maps.Keys(mails)), run["skipped"])
	}
}

// TestAlertFiresForTheSlicesThatMeetIt: a threshold alert to recipients on
// a role fires for the members whose slice crosses it, and not for the
// others.
func TestAlertFiresForTheSlicesThatMeetIt(t *testing.T) {
	gate.Parallel(t)
	w := newPermWorld(t)
	sub := w.subscribe(t, 201, map[string]any{
		"condition":  map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.revenue + "') gt 50"}},
		"recipients": map[string]any{"roles": []any{"/svc/projects/" + w.m.pid + "/roles/3"}},
	})
	run, mails := w.fire(t, sub, 1, 2)
	if _, ok := mails["ann@example.com"]; ok {
		t.Errorf("North's 30 does not cross 50, yet ann got %q", mails["ann@example.com"].Text)
	}
	regionMail(t, mails["bob@example.com"], "East")
	regionMail(t, mails["cid@example.com"], "West")
	aud := run["audience"].(map[string]any)
	if aud["notTriggered"] != 1.0 || aud["recipients"] != 2.0 || aud["slices"] != 3.0 {
		t.Errorf("the run's audience: %v", aud)
	}
}

// TestOwnerFiresWithinTheirFilters: a subscription runs as its owner, and
// an owner with a user filter gets their slice on their own channel: the
// revenue and the report of their region only.
func TestOwnerFiresWithinTheirFilters(t *testing.T) {
	gate.Parallel(t)
	w := newPermWorld(t)
	ann := w.users["ann"]
	r := w.do(t, ann, "POST", w.uris["ann"]+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"ann@example.com"}},"meta":{"title":"Mail"}}}`)
	wantStatus(t, r, 201)
	channel := dig(r.json(t), "channelConfiguration", "meta", "uri").(string)
	sub := map[string]any{
		"triggers":    []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 * * * * *"}}},
		"condition":   map[string]any{"condition": map[string]any{"expression": "true"}},
		"message":     map[string]any{"template": map[string]any{"expression": "Revenue: ${f:executeMetric('" + w.revenue + "')}"}},
		"attachments": []any{map[string]any{"report": w.byRegion, "formats": []any{"CSV"}}},
		"channels":    []any{channel},
		"meta":        map[string]any{"title": "Mine"},
	}
	r = w.do(t, ann, "POST", "/svc/projects/"+w.m.pid+"/users/"+uid(w.uris["ann"])+"/subscriptions",
		jsonString(map[string]any{"subscription": sub}))
	wantStatus(t, r, 201)
	before := len(w.smtp.Messages())
	w.b.Clock.Advance(time.Minute)
	waitFor(t, func() bool { return len(w.smtp.Messages()) > before })
	regionMail(t, w.smtp.Messages()[before], "North")
}

// TestEmptySliceSendsItsRecipientsNothing: with onEmpty notifyOwner, a
// recipient whose slice's report has no rows (ann, now on a region without
// orders) is sent nothing, the others their region, and the owner is told
// once at their login; the run counts ann as empty.
func TestEmptySliceSendsItsRecipientsNothing(t *testing.T) {
	gate.Parallel(t)
	w := newPermWorld(t)
	wantStatus(t, w.m.load("dataset.regions", "incremental", "id,nm_name\nr4,South\n"), 200)
	titles, uris := w.m.elements(w.attr + "/elements")
	for i, title := range titles {
		w.elements[title] = uris[i]
	}
	w.assign(t, map[string][]string{"ann": {w.userFilter(t, w.admin, "South", 200)}})
	sub := w.subscribe(t, 201, map[string]any{"onEmpty": "notifyOwner",
		"recipients": map[string]any{"users": []any{w.uris["ann"], w.uris["bob"], w.uris["cid"]}}})
	run, mails := w.fire(t, sub, 1, 3)
	if _, ok := mails["ann@example.com"]; ok {
		t.Errorf("ann's slice is empty, yet ann got %q", mails["ann@example.com"].Text)
	}
	regionMail(t, mails["bob@example.com"], "East")
	regionMail(t, mails["cid@example.com"], "West")
	notice, ok := mails[w.b.Config.AdminLogin]
	if !ok || !strings.Contains(notice.Text, "had no rows") || len(notice.Attachments) != 0 {
		t.Errorf("the owner's notice: %v %q", ok, notice.Text)
	}
	aud := run["audience"].(map[string]any)
	if run["state"] != "delivered" || run["reason"] != "empty report; the owner was told" || aud["empty"] != 1.0 ||
		aud["recipients"] != 2.0 || aud["slices"] != 3.0 {
		t.Errorf("the run: %v %v, audience %v", run["state"], run["reason"], aud)
	}
}
