package app_test

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
)

// The regions of the permissions world and what their orders add up to.
var regionTotals = map[string]float64{"North": 30, "East": 100, "West": 1001}

// permWorld is a project of regions and orders (the shop model), its admin,
// an editor and three viewers, ann, bob and cid, each with a user filter on
// one region: North, East and West.
type permWorld struct {
	b       *apptest.Bundle
	smtp    *channeltest.SMTPServer
	admin   *browser
	m       *mdClient
	users   map[string]*browser // by name: ann, bob, cid, eve (the editor)
	uris    map[string]string   // profile URIs by name
	filters map[string]string   // user filter URIs by region
	// revenue is a metric of the orders' amount; byRegion a report of it by
	// region (a grid); attr and label are the region attribute and its label.
	revenue, byRegion, attr, label string
	elements                       map[string]string // region element URIs by title
}

func newPermWorld(t *testing.T, opts ...apptest.Option) *permWorld {
	t.Helper()
	smtp := channeltest.NewSMTPServer(t)
	opts = append([]apptest.Option{func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "reports@herald.test"
		c.Delivery.MaxAttempts = 1
	}}, opts...)
	b := apptest.Start(t, opts...)
	w := &permWorld{b: b, smtp: smtp, admin: newBrowser(t, b.URL, "ua-admin"), users: map[string]*browser{},
		uris: map[string]string{}, filters: map[string]string{}, elements: map[string]string{}}
	w.admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	w.m = newMD(t, b, w.admin)
	wantStatus(t, w.m.manage(shopMAQL), 200)
	wantStatus(t, w.m.load("dataset.regions", "full", "id,nm_name\nr1,North\nr2,East\nr3,West\n"), 200)
	wantStatus(t, w.m.load("dataset.products", "full", "id,nm_name,category\n1,Pen,Tools\n"), 200)
	wantStatus(t, w.m.load("dataset.orders", "full", "id,f_amount,f_qty,regions_id,products_id,dt_ordered_on_id\n"+
		"1,10,1,r1,1,2024-01-01\n2,20,1,r1,1,2024-01-02\n3,100,1,r2,1,2024-01-03\n4,1000,1,r3,1,2024-01-04\n5,1,1,r3,1,2024-01-05\n"), 200)
	ids := w.m.uris("attr.regions.id", "label.regions.name")
	w.attr, w.label = ids["attr.regions.id"], ids["label.regions.name"]
	titles, uris := w.m.elements(w.attr + "/elements")
	for i, title := range titles {
		w.elements[title] = uris[i]
	}
	w.revenue = w.m.create(metricJSON("Revenue", "SELECT SUM({fact.orders.amount})"))
	def := w.m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Revenue by region"},
		"content": gridDef([]any{gridAttr(w.label)}, []any{"metricGroup"}, []string{w.revenue})}}))
	w.byRegion = w.m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Revenue by region"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
	for name, role := range map[string]string{"ann": "3", "bob": "3", "cid": "3", "eve": "5"} {
		_, w.uris[name] = b.NewUser(t, name+"@example.com")
		wantStatus(t, w.admin.do("POST", "/svc/projects/"+w.m.pid+"/users", `{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/`+
			w.m.pid+`/roles/`+role+`"]},"links":{"self":"`+w.uris[name]+`"}}}`), 200)
		w.users[name] = newBrowser(t, b.URL, "ua-"+name)
		w.users[name].loginWithToken(name+"@example.com", "S3cret-pass")
	}
	for _, region := range []string{"North", "East", "West"} {
		w.filters[region] = w.userFilter(t, w.admin, region, 200)
	}
	w.assign(t, map[string][]string{"ann": {w.filters["North"]}, "bob": {w.filters["East"]}, "cid": {w.filters["West"]}})
	return w
}

// userFilter creates, as b, a user filter of the region and returns its URI;
// a status other than 200 returns "".
func (w *permWorld) userFilter(t *testing.T, b *browser, region string, status int) string {
	t.Helper()
	r := b.do("POST", w.m.md+"/obj", jsonString(map[string]any{"userFilter": map[string]any{
		"content": map[string]any{"expression": "[" + w.attr + "] IN ([" + w.elements[region] + "])"},
		"meta":    map[string]any{"category": "userFilter", "title": region}}}))
	wantStatus(t, r, status)
	if status != 200 {
		return ""
	}
	return r.json(t)["uri"].(string)
}

// filterBody is the body of a user filter of the expression.
func (w *permWorld) filterBody(expr string) string {
	return jsonString(map[string]any{"userFilter": map[string]any{
		"content": map[string]any{"expression": expr},
		"meta":    map[string]any{"category": "userFilter", "title": expr}}})
}

// filterOf creates, as the admin, a user filter of the expression and returns its URI.
func (w *permWorld) filterOf(t *testing.T, expr string) string {
	t.Helper()
	r := w.do(t, w.admin, "POST", w.m.md+"/obj", w.filterBody(expr))
	wantStatus(t, r, 200)
	return r.json(t)["uri"].(string)
}

// assign sets the user filters of users by name, as the project's admin.
func (w *permWorld) assign(t *testing.T, filters map[string][]string) map[string]any {
	t.Helper()
	var items []any
	for name, fs := range filters {
		user, ok := w.uris[name]
		if !ok {
			user = "/svc/account/profile/" + name
		}
		items = append(items, map[string]any{"user": user, "userFilters": fs})
	}
	r := w.do(t, w.admin, "POST", w.m.md+"/userfilters", jsonString(map[string]any{"userFilters": map[string]any{"items": items}}))
	wantStatus(t, r, 200)
	return r.json(t)["userFiltersUpdateResult"].(map[string]any)
}

// do is a request as b, with a new temporary token first when the clock has
// moved past it.
func (w *permWorld) do(t *testing.T, b *browser, method, path, body string) reply {
	t.Helper()
	r := b.do(method, path, body)
	if r.status == 401 {
		wantStatus(t, b.do("GET", "/svc/account/token", ""), 200)
		r = b.do(method, path, body)
	}
	return r
}

// execute runs the report as b and returns its reportResult2 URI and its
// cells by region.
func (w *permWorld) execute(t *testing.T, b *browser, req map[string]any) (string, map[string]float64) {
	t.Helper()
	r := w.do(t, b, "POST", "/svc/xtab2/executor3", jsonString(map[string]any{"report_req": req}))
	wantStatus(t, r, 201)
	result := dig(r.json(t), "reportResult2", "meta", "uri").(string)
	m := &mdClient{t: t, b: b, pid: w.m.pid, md: w.m.md}
	_, x := m.data(dig(r.json(t), "reportResult2", "content", "dataResult").(string))
	if x == nil {
		return result, nil
	}
	return result, x.cells(t)
}

// csvRows downloads an export (or a raw export) as b and returns its rows.
func (w *permWorld) csvRows(t *testing.T, b *browser, uri string) [][]string {
	t.Helper()
	var r reply
	waitFor(t, func() bool {
		r = w.do(t, b, "GET", uri, "")
		return r.status != 202
	})
	wantStatus(t, r, 200)
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestDataPermissionsRestrictEveryExecution: three viewers with user filters
// on three regions execute the same report through executor3, export it as
// CSV, export it raw and list the regions: each sees only their region's
// rows and totals; none reads another's result; only the project's admins
// make, read, list, assign and delete user filters; bad filters and
// assignments answer 400 naming what is wrong.
func TestDataPermissionsRestrictEveryExecution(t *testing.T) {
	gate.Parallel(t)
	w := newPermWorld(t)
	want := map[string]string{"ann": "North", "bob": "East", "cid": "West"}
	results := map[string]string{}
	for name, region := range want {
		b := w.users[name]
		result, cells := w.execute(t, b, map[string]any{"report": w.byRegion})
		results[name] = result
		compare(t, cells, map[string]float64{region + "|Revenue": regionTotals[region]})
		_, total := w.execute(t, b, w.m.content(gridDef([]any{}, []any{"metricGroup"}, []string{w.revenue})))
		compare(t, total, map[string]float64{"|Revenue": regionTotals[region]})

		r := w.do(t, b, "POST", "/svc/exporter/executor", `{"result_req":{"report":"`+result+`","format":"CSV"}}`)
		wantStatus(t, r, 201)
		if rows := w.csvRows(t, b, r.json(t)["uri"].(string)); len(rows) != 2 || rows[1][0] != region ||
			rows[1][1] != fmt.Sprint(regionTotals[region]) {
			t.Errorf("%s's CSV export: %q, want only %s with %v", name, rows, region, regionTotals[region])
		}
		r = w.do(t, b, "POST", "/svc/projects/"+w.m.pid+"/execute/raw", `{"report_req":{"report":"`+w.byRegion+`"}}`)
		wantStatus(t, r, 201)
		if rows := w.csvRows(t, b, r.json(t)["uri"].(string)); len(rows) != 2 || rows[1][0] != region {
			t.Errorf("%s's raw export: %q, want only %s", name, rows, region)
		}
		m := &mdClient{t: t, b: b, pid: w.m.pid, md: w.m.md}
		if titles, _ := m.elements(w.label + "/elements"); !slices.Equal(titles, []string{region}) {
			t.Errorf("%s lists the regions %v, want %s", name, titles, region)
		}
	}
	// The admin has no filter and sees them all.
	_, cells := w.execute(t, w.admin, map[string]any{"report": w.byRegion})
	compare(t, cells, map[string]float64{"North|Revenue": 30, "East|Revenue": 100, "West|Revenue": 1001})

	// Nobody reads a result of another slice: not its data, not an export of it.
	adminResult, _ := w.execute(t, w.admin, map[string]any{"report": w.byRegion})
	for _, other := range []string{results["ann"], adminResult} {
		r := w.do(t, w.users["bob"], "POST", "/svc/exporter/executor", `{"result_req":{"report":"`+other+`","format":"CSV"}}`)
		wantStatus(t, r, 404)
		wantStatus(t, w.do(t, w.users["bob"], "GET", other, ""), 404)
	}
	r := w.do(t, w.users["ann"], "POST", "/svc/xtab2/executor3", `{"report_req":{"report":"`+w.byRegion+`"}}`)
	data := dig(r.json(t), "reportResult2", "content", "dataResult").(string)
	wantStatus(t, w.do(t, w.users["bob"], "GET", data, ""), 404)

	// Only the project's admins touch user filters: an editor gets 403.
	eve := w.users["eve"]
	w.userFilter(t, eve, "North", 403)
	for _, path := range []string{w.filters["North"], w.m.md + "/query/userfilters", w.m.md + "/userfilters",
		w.m.md + "/objects/query?category=userFilter"} {
		wantStatus(t, w.do(t, eve, "GET", path, ""), 403)
	}
	wantStatus(t, w.do(t, eve, "DELETE", w.filters["North"], ""), 403)
	wantStatus(t, w.do(t, eve, "POST", w.m.md+"/userfilters", `{"userFilters":{"items":[{"user":"`+w.uris["eve"]+`","userFilters":[]}]}}`), 403)
	if entries := entries(t, w.m.get(w.m.md + "/query/userfilters")["query"].(map[string]any)["entries"]); len(entries) != 3 {
		t.Errorf("the admin lists %d user filters, want 3: %v", len(entries), entries)
	}

	// The assignments as the platform's clients read them.
	got := w.m.get(w.m.md + "/userfilters?users=" + w.uris["ann"])["userFilters"].(map[string]any)
	if fmt.Sprint(got["items"]) != fmt.Sprintf("[map[user:%s userFilters:[%s]]]", w.uris["ann"], w.filters["North"]) || got["length"] != 1.0 {
		t.Errorf("ann's assignments: %v", got)
	}
	byFilter := w.m.get(w.m.md + "/userfilters?userFilters=" + w.filters["East"])["userFilters"].(map[string]any)
	if fmt.Sprint(byFilter["items"]) != fmt.Sprintf("[map[user:%s userFilters:[%s]]]", w.uris["bob"], w.filters["East"]) {
		t.Errorf("the assignments of the East filter: %v", byFilter)
	}
	// The bound on the users listed comes before any of them is looked up:
	// past it, the request is refused whatever the users are.
	r = w.admin.do("GET", w.m.md+"/userfilters?users="+strings.Repeat("/svc/account/profile/x,", 1000)+"nope", "")
	wantStatus(t, r, 400)
	if !strings.Contains(r.body, "at most 1000") {
		t.Errorf("1,001 users listed: %s", r.body)
	}
	all := w.m.get(w.m.md + "/userfilters?count=2&offset=0")["userFilters"].(map[string]any)
	if len(all["items"].([]any)) != 2 || all["length"] != 3.0 || all["count"] != 2.0 {
		t.Errorf("a page of the assignments: %v", all)
	}
	res := w.assign(t, map[string][]string{"eve": {w.filters["West"]}, "nobody": {w.filters["West"]}})
	if fmt.Sprint(res["successful"]) != "["+w.uris["eve"]+"]" || len(res["failed"].([]any)) != 1 {
		t.Errorf("an assignment to a user who does not exist: %v", res)
	}
	// An editor changes no user filter, least of all their own: eve's West
	// stays West, whether she sends a user filter or a metric in its place.
	all3 := "[" + w.attr + "] IN ([" + w.elements["North"] + "], [" + w.elements["East"] + "], [" + w.elements["West"] + "])"
	wantStatus(t, w.do(t, eve, "PUT", w.filters["West"], w.filterBody(all3)), 403)
	wantStatus(t, w.do(t, eve, "PUT", w.filters["West"], metricJSON("West", "SELECT SUM({fact.orders.amount})")), 403)
	_, cells = w.execute(t, eve, map[string]any{"report": w.byRegion})
	compare(t, cells, map[string]float64{"West|Revenue": 1001})

	// NOT IN, <> and = restrict as IN does, a user's filters meet (AND), and
	// an admin's change of a filter's expression changes the next execution.
	notNorth := w.filterOf(t, "["+w.attr+"] NOT IN (["+w.elements["North"]+"])")
	notWest := w.filterOf(t, "["+w.attr+"] <> ["+w.elements["West"]+"]")
	w.assign(t, map[string][]string{"eve": {notNorth, notWest}})
	_, cells = w.execute(t, eve, map[string]any{"report": w.byRegion})
	compare(t, cells, map[string]float64{"East|Revenue": 100})
	wantStatus(t, w.do(t, w.admin, "PUT", notWest, w.filterBody("["+w.attr+"] = ["+w.elements["West"]+"]")), 200)
	_, cells = w.execute(t, eve, map[string]any{"report": w.byRegion})
	compare(t, cells, map[string]float64{"West|Revenue": 1001})

	// Bad filters and assignments name what is wrong.
	product := w.m.uris("attr.products.id")["attr.products.id"]
	_, products := w.m.elements(product + "/elements")
	for expr, wantMsg := range map[string]string{
		"[" + w.attr + "] IN ([" + products[0] + "])":                                                "is an element of",
		"[/svc/md/" + w.m.pid + "/obj/99999] IN ([/svc/md/" + w.m.pid + "/obj/99999/elements?id=1])": "is not an object of this project",
		"[" + w.attr + "] IN ([" + w.attr + "/elements?id=9999])":                                    "is no element of",
		"[" + w.attr + "] IN (": "syntax",
	} {
		r := w.admin.do("POST", w.m.md+"/obj", jsonString(map[string]any{"userFilter": map[string]any{
			"content": map[string]any{"expression": expr}, "meta": map[string]any{"title": "bad"}}}))
		wantStatus(t, r, 400)
		if e := fmt.Sprint(r.errorBody(t)); !strings.Contains(e, "userFilter.content.expression") ||
			!strings.Contains(strings.ToLower(e), strings.ToLower(wantMsg)) {
			t.Errorf("filter %s: %s, want the expression named and %q", expr, e, wantMsg)
		}
	}
	r = w.admin.do("POST", w.m.md+"/userfilters", `{"userFilters":{"items":[{"user":"`+w.uris["ann"]+`","userFilters":["`+w.revenue+`"]}]}}`)
	wantStatus(t, r, 200)
	if failed := r.json(t)["userFiltersUpdateResult"].(map[string]any)["failed"].([]any); len(failed) != 1 {
		t.Errorf("assigning a metric as a user filter: %s", r.body)
	}
	r = w.admin.do("POST", w.m.md+"/userfilters", `{"userFilters":{"items":[{"user":"nope","userFilters":[]}]}}`)
	wantStatus(t, r, 400)
	if !strings.Contains(r.body, "userFilters.items[0].user") {
		t.Errorf("a malformed user: %s", r.body)
	}

	// An assigned filter is not deleted; unassigned, it is.
	wantStatus(t, w.admin.do("DELETE", w.filters["North"], ""), 409)
	w.assign(t, map[string][]string{"ann": {}})
	wantStatus(t, w.admin.do("DELETE", w.filters["North"], ""), 204)
	_, cells = w.execute(t, w.users["ann"], map[string]any{"report": w.byRegion})
	if len(cells) != 3 {
		t.Errorf("ann without filters sees %v", cells)
	}
}

// TestDataPermissionsTravelWithTheProject: a whole project exported with its
// users and imported into an empty project brings each member's user
// filters: ann still sees only the North there. A partial export, an
// editor's tool, leaves user filters out.
func TestDataPermissionsTravelWithTheProject(t *testing.T) {
	gate.Parallel(t)
	w := newPermWorld(t)
	token := w.m.exportProject(`{"exportUsers":true,"exportData":true}`)
	dst := newMD(t, w.b, w.admin)
	if state := dst.importProject(token); state["status"] != "OK" {
		t.Fatalf("import %v", state)
	}
	ident := dig(w.m.get(w.byRegion), "report", "meta", "identifier").(string)
	report := dst.uris(ident)[ident]
	r := w.do(t, w.users["ann"], "POST", "/svc/xtab2/executor3", `{"report_req":{"report":"`+report+`"}}`)
	wantStatus(t, r, 201)
	m := &mdClient{t: t, b: w.users["ann"], pid: dst.pid, md: dst.md}
	_, x := m.data(dig(r.json(t), "reportResult2", "content", "dataResult").(string))
	compare(t, x.cells(t), map[string]float64{"North|Revenue": 30})
	if got := dst.get(dst.md + "/userfilters?users=" + w.uris["ann"])["userFilters"].(map[string]any); got["length"] != 1.0 {
		t.Errorf("ann's assignments in the imported project: %v", got)
	}

	partial := w.m.partialExport(w.filters["East"], w.byRegion)
	other := newMD(t, w.b, w.admin)
	wantStatus(t, other.manage(shopMAQL), 200)
	if state := other.partialImport(`{"token":"` + partial + `","overwriteNewer":true,"updateLDMObjects":false}`); state["status"] != "OK" {
		t.Fatalf("partial import %v", state)
	}
	if entries := other.get(other.md + "/query/userfilters")["query"].(map[string]any)["entries"].([]any); len(entries) != 0 {
		t.Errorf("a partial import brought user filters: %v", entries)
	}
}
