package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// salesMAQL is a model of two datasets, stores and sales, where sales references stores
// and a date dimension.
const salesMAQL = `CREATE FOLDER {dim.stores} VISUAL(TITLE "Stores") TYPE ATTRIBUTE;
CREATE FOLDER {ffld.sales} VISUAL(TITLE "Sales") TYPE FACT;
CREATE DATASET {dataset.stores} VISUAL(TITLE "Stores");
CREATE ATTRIBUTE {attr.stores.id} VISUAL(TITLE "Store", FOLDER {dim.stores}) AS KEYS {f_stores.id} FULLSET;
ALTER DATASET {dataset.stores} ADD {attr.stores.id};
ALTER ATTRIBUTE {attr.stores.id} ADD LABELS {label.stores.name} VISUAL(TITLE "Store Name") AS {f_stores.nm_name},
    {label.stores.city} VISUAL(TITLE "City") AS {f_stores.nm_city};
ALTER ATTRIBUTE {attr.stores.id} DEFAULT LABEL {label.stores.name};
INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "sold_on", TITLE "Sold On");
CREATE DATASET {dataset.sales} VISUAL(TITLE "Sales");
CREATE ATTRIBUTE {attr.sales.id} VISUAL(TITLE "Sale") AS KEYS {f_sales.id} FULLSET;
CREATE FACT {fact.sales.amount} VISUAL(TITLE "Amount", FOLDER {ffld.sales}) AS {f_sales.f_amount};
ALTER DATASET {dataset.sales} ADD {attr.sales.id}, {fact.sales.amount};
ALTER ATTRIBUTE {attr.stores.id} ADD KEYS {f_sales.stores_id};
ALTER ATTRIBUTE {sold_on.date} ADD KEYS {f_sales.dt_sold_on_id};
ALTER DATATYPE {f_sales.id} INT;
ALTER DATATYPE {f_sales.f_amount} DECIMAL(15,2);
SYNCHRONIZE {dataset.stores}, {dataset.sales};`

const storesCSV = "id,nm_name,nm_city\ns1,Downtown,Brno\ns2,Airport,Praha\ns3,Harbour,Brno\n"

// salesCSV names its columns by identifier.
const salesCSV = "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n1,10.50,s1,2024-01-31\n2,20,s2,2024-02-01\n3,5,s1,2025-03-01\n"

// mdClient drives the /svc/md routes of one project as a browser does.
type mdClient struct {
	t   *testing.T
	b   *browser
	pid string // project id
	md  string // /svc/md/<pid>
}

func newMD(t *testing.T, b *apptest.Bundle, admin *browser) *mdClient {
	t.Helper()
	r := admin.do("POST", "/svc/projects/", `{"project":{"content":{"guidedNavigation":1},"meta":{"title":"Sales","summary":""}}}`)
	wantStatus(t, r, 201)
	pid := strings.TrimPrefix(r.json(t)["uri"].(string), "/svc/projects/")
	return &mdClient{t: t, b: admin, pid: pid, md: "/svc/md/" + pid}
}

func jsonString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func (m *mdClient) manage(maql string) reply {
	m.t.Helper()
	return m.b.do("POST", m.md+"/ldm/manage", jsonString(map[string]any{"manage": map[string]any{"maql": maql}}))
}

func (m *mdClient) load(dataset, mode, csv string) reply {
	m.t.Helper()
	return m.b.do("POST", m.md+"/datasets/"+dataset+"/data?mode="+mode, csv, "Content-Type", "text/csv")
}

// create posts an object and returns its URI.
func (m *mdClient) create(obj string) string {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/obj", obj)
	wantStatus(m.t, r, 200)
	return r.json(m.t)["uri"].(string)
}

// get returns the body of a GET as decoded JSON.
func (m *mdClient) get(path string) map[string]any {
	m.t.Helper()
	r := m.b.do("GET", path, "")
	wantStatus(m.t, r, 200)
	return r.json(m.t)
}

// uris maps identifiers to URIs through the identifiers resource.
func (m *mdClient) uris(identifiers ...string) map[string]string {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/identifiers", jsonString(map[string]any{"identifierToUri": identifiers}))
	wantStatus(m.t, r, 200)
	var out struct {
		Identifiers []struct{ Identifier, URI string }
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		m.t.Fatal(err)
	}
	got := map[string]string{}
	for _, i := range out.Identifiers {
		got[i.Identifier] = i.URI
	}
	return got
}

// entries returns the links of a list's entries by title.
func entries(t *testing.T, list any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range list.([]any) {
		entry := e.(map[string]any)
		for _, k := range []string{"link", "author", "contributor", "tags", "created", "updated", "deprecated", "summary", "title", "category"} {
			if _, ok := entry[k]; !ok {
				t.Fatalf("entry %v has no %s", entry, k)
			}
		}
		out[entry["title"].(string)] = entry["link"].(string)
	}
	return out
}

// elements returns the titles and URIs of a page of elements.
func (m *mdClient) elements(path string) ([]string, []string) {
	m.t.Helper()
	body := m.get(path)["attributeElements"].(map[string]any)
	var titles, uris []string
	for _, e := range body["elements"].([]any) {
		titles = append(titles, e.(map[string]any)["title"].(string))
		uris = append(uris, e.(map[string]any)["uri"].(string))
	}
	return titles, uris
}

func dig(v any, path ...string) any {
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v
}

func metricJSON(title, expression string) string {
	return jsonString(map[string]any{"metric": map[string]any{"meta": map[string]any{"title": title},
		"content": map[string]any{"expression": expression, "format": "#,##0.00"}}})
}

func TestModelDataAndReports(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := newMD(t, b, admin)

	// The model: one script, one finished task.
	r := m.manage(salesMAQL)
	wantStatus(t, r, 200)
	task := r.json(t)["entries"].([]any)[0].(map[string]any)
	if task["category"] != "tasks-status" || !strings.HasPrefix(task["link"].(string), m.md+"/tasks/") {
		t.Fatalf("manage answered %s", r.body)
	}
	if status := dig(m.get(task["link"].(string)), "wTaskStatus", "status"); status != "OK" {
		t.Fatalf("task status %v", status)
	}

	// The data: physical column names for stores, identifiers for sales.
	r = m.load("dataset.stores", "full", storesCSV)
	wantStatus(t, r, 200)
	if rows := dig(r.json(t), "dataLoad", "rows"); rows != 3.0 {
		t.Fatalf("stores load: %s", r.body)
	}
	r = m.load("dataset.sales", "full", salesCSV)
	wantStatus(t, r, 200)
	if rows := dig(r.json(t), "dataLoad", "rows"); rows != 3.0 {
		t.Fatalf("sales load: %s", r.body)
	}
	version := dig(r.json(t), "dataLoad", "dataVersion").(float64)
	r = m.load("dataset.stores", "incremental", "id,nm_name,nm_city\ns4,Station,Ostrava\n")
	wantStatus(t, r, 200)
	if v := dig(r.json(t), "dataLoad", "dataVersion").(float64); v != version+1 {
		t.Fatalf("data version %v after %v", v, version)
	}

	uris := m.uris("fact.sales.amount", "label.stores.name", "label.stores.city", "attr.stores.id", "dataset.sales",
		"sold_on.year", "sold_on.year.yyyy", "dim.stores", "nope")
	if len(uris) != 8 {
		t.Fatalf("identifiers = %v", uris)
	}

	// The model's objects read back.
	attr := m.get(uris["attr.stores.id"])["attribute"].(map[string]any)
	if dig(attr, "meta", "title") != "Store" || dig(attr, "content", "defaultDisplayForm") != uris["label.stores.name"] ||
		dig(attr, "links", "elements") != uris["attr.stores.id"]+"/elements" {
		t.Fatalf("attribute = %v", attr)
	}
	sales := m.get(uris["dataset.sales"])["dataset"].(map[string]any)
	cols := dig(sales, "content", "synchronized", "columns").([]any)
	if len(cols) != 4 || dig(sales, "content", "table") != "f_sales" {
		t.Fatalf("sales dataset = %v", sales)
	}

	// Elements: ids are stable and address one element.
	titles, elemURIs := m.elements(uris["label.stores.name"] + "/elements")
	if !slices.Equal(titles, []string{"Airport", "Downtown", "Harbour", "Station"}) {
		t.Fatalf("store names = %v", titles)
	}
	downtown := elemURIs[1]
	if !strings.HasPrefix(downtown, uris["label.stores.name"]+"/elements?id=") {
		t.Fatalf("element URI %s", downtown)
	}
	if titles, _ := m.elements(downtown); !slices.Equal(titles, []string{"Downtown"}) {
		t.Fatalf("element %s = %v", downtown, titles)
	}
	// The same element in another label of the attribute.
	elemID := downtown[strings.LastIndex(downtown, "=")+1:]
	if titles, _ := m.elements(uris["label.stores.city"] + "/elements?id=" + elemID); !slices.Equal(titles, []string{"Brno"}) {
		t.Fatalf("city of element %s = %v", elemID, titles)
	}
	if titles, uris := m.elements(uris["sold_on.year"] + "/elements"); !slices.Equal(titles, []string{"2024", "2025"}) ||
		!strings.HasSuffix(uris[0], "/elements?id=2024") {
		t.Fatalf("years = %v %v", titles, uris)
	}

	// Metrics, a report definition and a report.
	amount := m.create(metricJSON("Amount", "SELECT SUM({fact.sales.amount})"))
	metric := m.get(amount)["metric"].(map[string]any)
	if dig(metric, "content", "expression") != "SELECT SUM(["+uris["fact.sales.amount"]+"])" || dig(metric, "content", "tree", "type") != "metric" {
		t.Fatalf("metric = %v", metric)
	}
	if dig(metric, "meta", "identifier") == "" || dig(metric, "meta", "category") != "metric" || dig(metric, "meta", "author") != b.AdminProfile {
		t.Fatalf("metric meta = %v", metric["meta"])
	}
	brno := m.create(metricJSON("Brno share", `SELECT {`+dig(metric, "meta", "identifier").(string)+`} / (SELECT SUM({fact.sales.amount}) BY ALL {attr.stores.id}) WHERE {label.stores.city} = "Brno"`))
	def := m.create(jsonString(map[string]any{"reportDefinition": map[string]any{
		"meta": map[string]any{"title": "Amount by store"},
		"content": map[string]any{"format": "grid",
			"grid": map[string]any{"rows": []any{map[string]any{"attribute": map[string]any{"uri": uris["label.stores.name"], "alias": ""}}},
				"columns": []any{"metricGroup"}, "metrics": []any{map[string]any{"uri": amount, "alias": ""}, map[string]any{"uri": brno, "alias": "Share"}}},
			"filters": []any{map[string]any{"expression": "[" + uris["label.stores.name"] + "] IN ([" + downtown + "])"}}}}}))
	report := m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Store report", "tags": "sales weekly"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
	rd := m.get(def)["reportDefinition"].(map[string]any)
	if f := dig(rd, "content", "filters").([]any)[0].(map[string]any)["expression"]; f != "["+uris["label.stores.name"]+"] IN (["+downtown+"])" {
		t.Fatalf("filter = %v", f)
	}
	if dig(m.get(report), "report", "meta", "tags") != "sales weekly" {
		t.Fatalf("report = %v", m.get(report))
	}

	// Lists.
	if got := entries(t, dig(m.get(m.md+"/query/reports"), "query", "entries")); got["Store report"] != report || len(got) != 1 {
		t.Fatalf("reports = %v", got)
	}
	if meta := dig(m.get(m.md+"/query/reports"), "query", "meta").(map[string]any); meta["category"] != "query" || meta["title"] != "List of reports" {
		t.Fatalf("list meta = %v", meta)
	}
	for query, want := range map[string][]string{
		"metrics": {"Amount", "Brno share"}, "reportdefinition": {"Amount by store"}, "facts": {"Amount"},
		"datasets": {"Stores", "Sold On", "Sales"}, "folders": {"Stores", "Sales"},
	} {
		got := entries(t, dig(m.get(m.md+"/query/"+query), "query", "entries"))
		for _, title := range want {
			if got[title] == "" {
				t.Errorf("%s: %q missing from %v", query, title, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}

	// Dependencies, both ways.
	using := entries(t, m.get(m.md + "/using2/" + id(report))["entries"])
	for _, title := range []string{"Amount by store", "Amount", "Brno share", "Store Name", "City", "Store", "Stores"} {
		if using[title] == "" {
			t.Errorf("report does not use %q: %v", title, using)
		}
	}
	if near := entries(t, m.get(m.md + "/using2/" + id(report) + "?nearest=1")["entries"]); len(near) != 1 || near["Amount by store"] != def {
		t.Errorf("report uses directly %v", near)
	}
	usedBy := entries(t, m.get(m.md + "/usedby2/" + id(uris["fact.sales.amount"]))["entries"])
	for _, title := range []string{"Amount", "Brno share", "Amount by store", "Store report"} {
		if usedBy[title] == "" {
			t.Errorf("fact is not used by %q: %v", title, usedBy)
		}
	}
	if typed := entries(t, m.get(m.md + "/usedby2/" + id(uris["fact.sales.amount"]) + "?types=metric")["entries"]); len(typed) != 2 {
		t.Errorf("metrics using the fact: %v", typed)
	}

	// Replace and delete, in order of use.
	r = admin.do("PUT", amount, metricJSON("Amount (all)", "SELECT SUM(["+uris["fact.sales.amount"]+"])"))
	wantStatus(t, r, 200)
	if dig(m.get(amount), "metric", "meta", "title") != "Amount (all)" {
		t.Fatal("PUT did not replace the metric")
	}
	r = admin.do("DELETE", amount, "")
	wantStatus(t, r, 409)
	if msg := fmt.Sprint(r.errorBody(t)["parameters"]); !strings.Contains(msg, "Brno share") || !strings.Contains(msg, "Amount by store") {
		t.Fatalf("409 does not name the users: %s", r.body)
	}
	wantStatus(t, admin.do("DELETE", report, ""), 204)
	wantStatus(t, admin.do("GET", report, ""), 404)
	wantStatus(t, admin.do("DELETE", def, ""), 204)
	wantStatus(t, admin.do("DELETE", brno, ""), 204)
	wantStatus(t, admin.do("DELETE", amount, ""), 204)
}

// id returns the object id at the end of an object URI.
func id(uri string) string { return uri[strings.LastIndex(uri, "/")+1:] }
