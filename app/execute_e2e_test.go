package app_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// shopReports is a shop project with its metrics, ready to execute.
type shopReports struct {
	*mdClient
	s                             *shop
	uris                          map[string]string
	revenue, orders, avg, aov, sh string
}

func newShopReports(t *testing.T, products, orders int) (*apptest.Bundle, *shopReports) {
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	s := newShop(products, orders)
	m := loadShop(t, b, admin, s)
	r := &shopReports{mdClient: m, s: s, uris: m.uris("label.regions.name", "attr.regions.id", "label.products.name",
		"attr.products.category", "ordered_on.year", "fact.orders.amount", "attr.orders.id")}
	r.revenue = m.create(metricJSON("Revenue", "SELECT SUM({fact.orders.amount})"))
	r.orders = m.create(jsonString(map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Orders"},
		"content": map[string]any{"expression": "SELECT COUNT({attr.orders.id})", "format": "#,##0"}}}))
	r.avg = m.create(metricJSON("Average amount", "SELECT AVG({fact.orders.amount})"))
	r.aov = m.create(metricJSON("Average order value", "SELECT ["+r.revenue+"] / ["+r.orders+"]"))
	r.sh = m.create(jsonString(map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Share"},
		"content": map[string]any{"expression": "SELECT [" + r.revenue + "] / (SELECT [" + r.revenue + "] BY ALL {attr.regions.id})",
			"format": "#,##0.0%"}}}))
	return b, r
}

// expect sums the orders that keep passes into cells keyed as cells() keys them.
type agg struct {
	cents int64
	n     int
}

func (s *shop) by(keep func(shopOrder) bool, key func(shopOrder) string) map[string]*agg {
	out := map[string]*agg{}
	for _, o := range s.orders {
		if keep != nil && !keep(o) {
			continue
		}
		k := key(o)
		if out[k] == nil {
			out[k] = &agg{}
		}
		out[k].cents += o.cents
		out[k].n++
	}
	return out
}

func region(o shopOrder) string { return regionNames[o.region] }

func TestExecuteAggregations(t *testing.T) {
	gate.Parallel(t)
	_, r := newShopReports(t, 40, 3000)
	category := func(o shopOrder) string { return r.s.products[o.product] }

	t.Run("sum, average and count by one attribute", func(t *testing.T) {
		x := r.run(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue, r.avg, r.orders})))
		want := map[string]float64{}
		for k, a := range r.s.by(nil, region) {
			want[k+"|Revenue"] = float64(a.cents) / 100
			want[k+"|Average amount"] = float64(a.cents) / 100 / float64(a.n)
			want[k+"|Orders"] = float64(a.n)
		}
		compare(t, x.cells(t), want)
	})
	t.Run("count by two attributes, one in columns", func(t *testing.T) {
		x := r.run(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])},
			[]any{gridAttr(r.uris["attr.products.category"]), "metricGroup"}, []string{r.orders, r.revenue})))
		want := map[string]float64{}
		for k, a := range r.s.by(nil, func(o shopOrder) string { return region(o) + "|" + category(o) }) {
			want[k+"/Orders"] = float64(a.n)
			want[k+"/Revenue"] = float64(a.cents) / 100
		}
		compare(t, x.cells(t), want)
		if len(x.Columns.Lookups) != 2 || x.Columns.Lookups[1]["0"] != "Orders" || x.Columns.Tree.Type != "root" ||
			x.Columns.Tree.Children[0].Children[0].Type != "metric" {
			t.Errorf("column headers: %+v", x.Columns)
		}
	})
	t.Run("filters IN elements and NOT IN texts", func(t *testing.T) { filtersInAndNotIn(t, r) })
	t.Run("a metric of metrics and a BY ALL share", func(t *testing.T) {
		x := r.run(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.aov, r.sh},
			"["+r.uris["ordered_on.year"]+"] = 2025")))
		in2025 := func(o shopOrder) bool { return o.date.Year() == 2025 }
		var total int64
		for _, a := range r.s.by(in2025, region) {
			total += a.cents
		}
		want := map[string]float64{}
		for k, a := range r.s.by(in2025, region) {
			want[k+"|Average order value"] = float64(a.cents) / 100 / float64(a.n)
			want[k+"|Share"] = float64(a.cents) / float64(total)
		}
		compare(t, x.cells(t), want)
	})
	t.Run("an empty result is 204", func(t *testing.T) {
		res := r.execute(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue},
			"["+r.uris["label.regions.name"]+`] = "Nowhere"`)))
		wantStatus(t, res, 201)
		if status, _ := r.data(dig(res.json(t), "reportResult2", "content", "dataResult").(string)); status != 204 {
			t.Fatalf("status %d, want 204", status)
		}
	})
	t.Run("a crafted label value is data", func(t *testing.T) {
		x := r.run(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.orders},
			"["+r.uris["label.regions.name"]+"] IN ("+strconv.Quote(crafted)+`, "Atlantis")`)))
		want := map[string]float64{crafted + "|Orders": float64(r.s.by(nil, region)[crafted].n)}
		compare(t, x.cells(t), want)
		// The tables are all still there.
		x = r.run(r.content(gridDef(nil, []any{"metricGroup"}, []string{r.orders})))
		compare(t, x.cells(t), map[string]float64{"|Orders": float64(len(r.s.orders))})
	})
}

// filtersInAndNotIn filters on elements of one attribute and texts of another.
func filtersInAndNotIn(t *testing.T, r *shopReports) {
	titles, elems := r.elements(r.uris["label.regions.name"] + "/elements")
	var north, south string
	for i, title := range titles {
		switch title {
		case "North":
			north = elems[i]
		case "South":
			south = elems[i]
		}
	}
	x := r.run(r.content(gridDef([]any{gridAttr(r.uris["attr.products.category"])}, []any{"metricGroup"}, []string{r.revenue},
		"["+r.uris["label.regions.name"]+"] IN (["+north+"], ["+south+"])",
		"["+r.uris["attr.products.category"]+`] NOT IN ("Books", "Music")`)))
	category := func(o shopOrder) string { return r.s.products[o.product] }
	keep := func(o shopOrder) bool {
		c := category(o)
		return (o.region == "r1" || o.region == "r2") && c != "Books" && c != "Music"
	}
	want := map[string]float64{}
	for k, a := range r.s.by(keep, category) {
		want[k+"|Revenue"] = float64(a.cents) / 100
	}
	compare(t, x.cells(t), want)
}

func TestExecutePaging(t *testing.T) {
	gate.Parallel(t)
	_, r := newShopReports(t, 2500, 6000)
	res := r.execute(r.content(gridDef([]any{gridAttr(r.uris["label.products.name"])}, []any{"metricGroup"}, []string{r.revenue, r.orders})))
	wantStatus(t, res, 201)
	uri := dig(res.json(t), "reportResult2", "content", "dataResult").(string)
	want := map[string]float64{}
	for k, a := range r.s.by(nil, func(o shopOrder) string { return productName(o.product) }) {
		want[k+"|Revenue"] = float64(a.cents) / 100
		want[k+"|Orders"] = float64(a.n)
	}
	_, whole := r.data(uri)
	if whole.OverallSize.Rows != len(want)/2 || whole.OverallSize.Columns != 2 || len(whole.Data) != len(want)/2 {
		t.Fatalf("overall size %+v with %d rows, want %d rows", whole.OverallSize, len(whole.Data), len(want)/2)
	}
	got := map[string]float64{}
	pages := 0
	for _, sep := range []string{";", "&"} {
		clear(got)
		for row := 0; row < whole.OverallSize.Rows; row += 700 {
			for col := range 2 {
				_, x := r.data(fmt.Sprintf("%s?offset=%d,%d%ssize=700,1", uri, row, col, sep))
				pages++
				if x.Offset.Rows != row || x.Offset.Columns != col || x.Size.Columns != 1 || x.Size.Rows != min(700, whole.OverallSize.Rows-row) {
					t.Fatalf("page at %d,%d: offset %+v size %+v", row, col, x.Offset, x.Size)
				}
				for k, v := range x.cells(t) {
					got[k] = v
				}
			}
		}
		compare(t, got, want)
	}
	if pages < 8 {
		t.Fatalf("only %d pages", pages)
	}
	// Rows come in label order.
	paths := whole.Rows.paths()
	if !strings.HasPrefix(paths[0], "Product 0") || paths[0] > paths[1] || paths[len(paths)-2] > paths[len(paths)-1] {
		t.Errorf("rows not in order: %v ... %v", paths[:2], paths[len(paths)-2:])
	}
	if r := r.b.do("GET", uri+"?offset=1;size=2,2", ""); r.status != 400 || !strings.Contains(r.body, "offset") {
		t.Errorf("bad offset: %d %s", r.status, r.body)
	}
}

func TestExecuteStoredAndCached(t *testing.T) {
	gate.Parallel(t)
	b, r := newShopReports(t, 20, 500)
	def := r.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Revenue by region"},
		"content": gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue})}}))
	report := r.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Regions"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))

	first := r.execute(map[string]any{"reportDefinition": def})
	wantStatus(t, first, 201)
	body := first.json(t)
	meta := dig(body, "reportResult2", "meta").(map[string]any)
	view := dig(body, "reportResult2", "content", "reportView").(map[string]any)
	if meta["category"] != "reportResult2" || meta["title"] != "Revenue by region" || !strings.HasPrefix(meta["uri"].(string), r.md+"/obj/") ||
		meta["author"] != b.AdminProfile || dig(body, "reportResult2", "content", "reportDefinition") != def {
		t.Fatalf("meta = %v", body)
	}
	for _, k := range []string{"tags", "created", "identifier", "deprecated", "summary", "updated", "contributor"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("meta has no %s", k)
		}
	}
	ms := view["metrics"].([]any)
	if view["reportName"] != "Revenue by region" || view["format"] != "grid" || len(ms) != 1 ||
		ms[0].(map[string]any)["metricId"] != r.revenue || ms[0].(map[string]any)["format"] != "#,##0.00" {
		t.Fatalf("reportView = %v", view)
	}

	// The same definition at the same data version shares the computed data; each
	// execution answers with an object of its own, which reads back as it was answered.
	again := r.execute(map[string]any{"reportDefinition": def})
	wantStatus(t, again, 201)
	if dig(again.json(t), "reportResult2", "content", "dataResult") != dig(body, "reportResult2", "content", "dataResult") ||
		dig(again.json(t), "reportResult2", "meta", "uri") == meta["uri"] {
		t.Fatalf("second execution: %s", again.body)
	}
	for _, answer := range []reply{first, again} {
		back := r.b.do("GET", dig(answer.json(t), "reportResult2", "meta", "uri").(string), "")
		wantStatus(t, back, 200)
		if !reflect.DeepEqual(back.json(t), answer.json(t)) {
			t.Errorf("GET of the result reads\n%s\nexecutor3 answered\n%s", back.body, answer.body)
		}
	}
	// A report runs its current definition under its own title.
	viaReport := r.execute(map[string]any{"report": report})
	wantStatus(t, viaReport, 201)
	if dig(viaReport.json(t), "reportResult2", "meta", "title") != "Regions" ||
		dig(viaReport.json(t), "reportResult2", "content", "reportDefinition") != def {
		t.Fatalf("report execution: %s", viaReport.body)
	}
	x := r.run(map[string]any{"reportDefinition": def})
	before := x.cells(t)["North|Revenue"]

	// A load changes the data version: a new result with the new numbers.
	wantStatus(t, r.load("dataset.orders", "incremental", "id,f_amount,f_qty,regions_id,products_id,dt_ordered_on_id\n999999,1000.25,1,r1,1,2025-06-01\n"), 200)
	after := r.execute(map[string]any{"reportDefinition": def})
	if dig(after.json(t), "reportResult2", "meta", "uri") == meta["uri"] {
		t.Fatal("a load did not invalidate the result")
	}
	x = r.run(map[string]any{"reportDefinition": def})
	if got := x.cells(t)["North|Revenue"]; !near(got, before+1000.25) {
		t.Fatalf("after the load North = %v, want %v", got, before+1000.25)
	}
}

func TestExecuteMetricThroughClient(t *testing.T) {
	gate.Parallel(t)
	b, r := newShopReports(t, 10, 300)
	var cents int64
	for _, o := range r.s.orders {
		cents += o.cents
	}
	ctx := context.Background()
	for _, tc := range []struct {
		metric, format string
		want           float64
	}{
		{r.revenue, "#,##0.00", float64(cents) / 100},
		{r.orders, "#,##0", float64(len(r.s.orders))},
		{r.sh, "#,##0.0%", 1},
	} {
		v, format, ok, err := b.Admin.ExecuteMetric(ctx, tc.metric)
		if err != nil || !ok || !near(v, tc.want) || format != tc.format {
			t.Errorf("ExecuteMetric(%s) = %v %q %v %v, want %v %q", tc.metric, v, format, ok, err, tc.want, tc.format)
		}
	}
	empty := r.create(metricJSON("Nothing", `SELECT SUM({fact.orders.amount}) WHERE {label.regions.name} = "Nowhere"`))
	if _, _, ok, err := b.Admin.ExecuteMetric(ctx, empty); err != nil || ok {
		t.Errorf("a metric without value: ok %v, err %v", ok, err)
	}
}

func TestExecuteBadInput(t *testing.T) {
	gate.Parallel(t)
	b, r := newShopReports(t, 5, 50)
	other, _ := b.NewUser(t, "outsider@x.io")
	outsider := newBrowser(t, b.URL, "ua-out")
	outsider.loginWithToken("outsider@x.io", "S3cret-pass")
	_ = other
	grid := gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue})
	for _, tc := range []struct {
		name   string
		as     *browser
		body   string
		status int
		field  string
	}{
		{"no report_req", r.b, `{}`, 400, "report_req"},
		{"two sources", r.b, jsonString(map[string]any{"report_req": map[string]any{"reportDefinition": r.revenue, "report": r.revenue}}), 400, "report_req"},
		{"not a URI", r.b, `{"report_req":{"reportDefinition":"nope"}}`, 400, "report_req.reportDefinition"},
		{"a metric is no definition", r.b, jsonString(map[string]any{"report_req": map[string]any{"reportDefinition": r.revenue}}), 400, "report_req.reportDefinition"},
		{"unknown definition", r.b, jsonString(map[string]any{"report_req": map[string]any{"reportDefinition": r.md + "/obj/999999"}}), 404, ""},
		{"no content", r.b, jsonString(map[string]any{"report_req": map[string]any{"definitionContent": map[string]any{"projectMetadata": r.md}}}), 400, "report_req.definitionContent.content"},
		{"bad project metadata", r.b, jsonString(map[string]any{"report_req": map[string]any{"definitionContent": map[string]any{"content": grid, "projectMetadata": "/x"}}}), 400, "report_req.definitionContent.projectMetadata"},
		{"metric of the wrong kind", r.b, jsonString(map[string]any{"report_req": r.content(gridDef(nil, []any{"metricGroup"}, []string{r.uris["fact.orders.amount"]}))}), 400, "report_req.definitionContent.content.grid.metrics[0].uri"},
		{"bad filter", r.b, jsonString(map[string]any{"report_req": r.content(gridDef(nil, []any{"metricGroup"}, []string{r.revenue}, "[x] IN"))}), 400, "report_req.definitionContent.content.filters[0].expression"},
		{"unknown field", r.b, `{"report_req":{"reportDefinition":"x","extra":1}}`, 400, ""},
		{"wrapped: bad filter", r.b, jsonString(map[string]any{"report_req": wrapped(r.mdClient, gridDef(nil, []any{"metricGroup"}, []string{r.revenue}, "[x] IN"))}),
			400, "report_req.definitionContent.content.reportDefinition.content.filters[0].expression"},
		{"wrapped: no content", r.b, jsonString(map[string]any{"report_req": map[string]any{"definitionContent": map[string]any{
			"content": map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "x"}}}, "projectMetadata": r.md}}}),
			400, "report_req.definitionContent.content.reportDefinition.content"},
		{"not a member", outsider, jsonString(map[string]any{"report_req": r.content(grid)}), 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.as.do("POST", "/svc/xtab2/executor3", tc.body)
			wantStatus(t, res, tc.status)
			if tc.field != "" && fmt.Sprint(res.errorBody(t)["parameters"]) != "["+tc.field+"]" {
				t.Errorf("parameters %v, want [%s]", res.errorBody(t)["parameters"], tc.field)
			}
		})
	}
	res := r.execute(r.content(grid))
	wantStatus(t, res, 201)
	data := dig(res.json(t), "reportResult2", "content", "dataResult").(string)
	// The platform's SDKs wrap the content as a report definition object; it computes the same.
	bare, inSDKForm := r.run(r.content(grid)), r.run(wrapped(r.mdClient, grid))
	if !reflect.DeepEqual(bare, inSDKForm) || bare == nil {
		t.Errorf("the wrapped form computes %+v, the bare one %+v", inSDKForm, bare)
	}
	wantStatus(t, outsider.do("GET", data, ""), 404)
	wantStatus(t, r.b.do("GET", r.md+"/dataResult/nope", ""), 404)
}

// wrapped is a report request of a definition's content as the platform's SDKs send it:
// wrapped as a reportDefinition object with its meta.
func wrapped(m *mdClient, def map[string]any) map[string]any {
	return map[string]any{"definitionContent": map[string]any{"projectMetadata": m.md, "content": map[string]any{
		"reportDefinition": map[string]any{"content": def, "meta": map[string]any{"title": "Untitled report", "category": "reportDefinition"}}}}}
}

// TestEachCallerGetsItsOwnResult: two members execute the same report at the same data
// version; they share the computed data, and each reads back a result that names her as
// its author at her time. A non-member reads neither.
func TestEachCallerGetsItsOwnResult(t *testing.T) {
	gate.Parallel(t)
	b, r := newShopReports(t, 5, 50)
	_, janeURI := b.NewUser(t, "jane@x.io")
	wantStatus(t, r.b.do("POST", "/svc/projects/"+r.pid+"/users",
		`{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/`+r.pid+`/roles/3"]},"links":{"self":"`+janeURI+`"}}}`), 200)
	jane := newBrowser(t, b.URL, "ua-jane")
	jane.loginWithToken("jane@x.io", "S3cret-pass")
	req := jsonString(map[string]any{"report_req": r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue}))})

	adminRes := r.b.do("POST", "/svc/xtab2/executor3", req)
	wantStatus(t, adminRes, 201)
	b.Clock.Advance(time.Minute)
	janeRes := jane.do("POST", "/svc/xtab2/executor3", req)
	wantStatus(t, janeRes, 201)
	a, j := dig(adminRes.json(t), "reportResult2").(map[string]any), dig(janeRes.json(t), "reportResult2").(map[string]any)
	if dig(a, "content", "dataResult") != dig(j, "content", "dataResult") {
		t.Errorf("equal executions compute twice: %v and %v", dig(a, "content", "dataResult"), dig(j, "content", "dataResult"))
	}
	if dig(j, "meta", "author") != janeURI || dig(j, "meta", "created") == dig(a, "meta", "created") || dig(a, "meta", "author") == janeURI {
		t.Errorf("jane's result carries author %v created %v; the admin's %v %v", dig(j, "meta", "author"), dig(j, "meta", "created"),
			dig(a, "meta", "author"), dig(a, "meta", "created"))
	}
	back := jane.do("GET", dig(j, "meta", "uri").(string), "")
	wantStatus(t, back, 200)
	if dig(back.json(t), "reportResult2", "meta", "author") != janeURI {
		t.Errorf("read back: %s", back.body)
	}
	outsider := newBrowser(t, b.URL, "ua-out")
	b.NewUser(t, "out@x.io")
	outsider.loginWithToken("out@x.io", "S3cret-pass")
	wantStatus(t, outsider.do("GET", dig(j, "meta", "uri").(string), ""), 404)
	wantStatus(t, jane.do("GET", r.md+"/obj/nosuchresult", ""), 404)
}
