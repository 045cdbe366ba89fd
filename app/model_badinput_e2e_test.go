package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// errText renders an error body's message with its parameters, as clients do.
func errText(t *testing.T, r reply) string {
	t.Helper()
	e := r.errorBody(t)
	params, _ := e["parameters"].([]any)
	return fmt.Sprintf(e["message"].(string), params...)
}

// wantError checks the status and that the rendered message contains want.
func wantError(t *testing.T, r reply, status int, want string) {
	t.Helper()
	wantStatus(t, r, status)
	if got := errText(t, r); !strings.Contains(got, want) {
		t.Fatalf("error %q, want it to contain %q", got, want)
	}
}

// loadedSales sets up a project with the sales model and its data.
func loadedSales(t *testing.T, b *apptest.Bundle, admin *browser) *mdClient {
	t.Helper()
	m := newMD(t, b, admin)
	wantStatus(t, m.manage(salesMAQL), 200)
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	return m
}

func TestModelBadMAQL(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := loadedSales(t, b, admin)
	uris := m.uris("label.stores.city", "label.stores.name", "dataset.stores")

	syntax := []struct{ name, maql, want string }{
		{"missing semicolon", "CREATE DATASET {d}\nCREATE DATASET {e}", `line 2, column 1, near "CREATE": unexpected "CREATE", expected ";"`},
		{"bad keyword", "CREATE DATASET {d};\n  ALTER TABLE {t}", `line 2, column 9, near "TABLE"`},
		{"end of input", `CREATE DATASET {d} VISUAL(TITLE "x"`, "line 1, column 36, at the end of the input"},
		{"bad length", "ALTER DATATYPE {t.c} VARCHAR(0)", `line 1, column 30, near "0"`},
	}
	for _, tc := range syntax {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, m.manage(tc.maql), 400, tc.want)
		})
	}
	wantError(t, m.manage("-- nothing"), 400, "manage.maql")

	datasets := func() map[string]string { return entries(t, dig(m.get(m.md+"/query/datasets"), "query", "entries")) }
	before := datasets()
	names := func() []string { titles, _ := m.elements(uris["label.stores.name"] + "/elements"); return titles }
	storesBefore := names()
	stores := func() string {
		return jsonString(dig(m.get(uris["dataset.stores"]), "dataset", "content", "synchronized"))
	}
	layoutBefore := stores()

	t.Run("a failing statement in the middle changes nothing", func(t *testing.T) {
		// Line 2 would empty the stores table; line 3 fails in the model.
		r := m.manage("CREATE DATASET {dataset.extra} VISUAL(TITLE \"Extra\");\nSYNCHRONIZE {dataset.stores};\n" +
			"ALTER ATTRIBUTE {attr.x} ADD KEYS {f_extra.x_id};\nSYNCHRONIZE {dataset.extra}")
		wantError(t, r, 400, "line 3: attribute {attr.x} does not exist")
		if got := datasets(); len(got) != len(before) || got["Extra"] != "" {
			t.Fatalf("datasets now %v, were %v", got, before)
		}
		if len(m.uris("dataset.extra")) != 0 {
			t.Fatal("dataset.extra was stored")
		}
		if got := names(); !slices.Equal(got, storesBefore) {
			t.Fatalf("stores now %v, were %v", got, storesBefore)
		}
	})
	t.Run("a statement failing in the warehouse changes nothing", func(t *testing.T) {
		// Line 2 synchronizes the new type of line 1; "Praha" does not fit VARCHAR(3).
		r := m.manage("ALTER DATATYPE {f_stores.nm_city} VARCHAR(3);\nSYNCHRONIZE {dataset.stores} PRESERVE DATA;\nCREATE DATASET {dataset.more}")
		wantError(t, r, 400, "line 2: column f_stores.nm_city has 3 values longer than VARCHAR(3) allows")
		if got := stores(); got != layoutBefore {
			t.Fatalf("synchronized stores now %s, were %s", got, layoutBefore)
		}
		if titles, _ := m.elements(uris["label.stores.city"] + "/elements"); !slices.Equal(titles, []string{"Brno", "Brno", "Praha"}) {
			t.Fatalf("cities = %v", titles)
		}
		if len(m.uris("dataset.more")) != 0 {
			t.Fatal("dataset.more was stored")
		}
	})
	t.Run("a model object a metric uses cannot be dropped", func(t *testing.T) {
		uri := m.create(metricJSON("Amount", "SELECT SUM({fact.sales.amount})"))
		wantError(t, m.manage("DROP ALL IN {dataset.sales}"), 400, `line 1: fact {fact.sales.amount} is used by metric "Amount" (`+uri+`)`)
	})
}

func TestModelBadCSV(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := loadedSales(t, b, admin)
	uris := m.uris("attr.sales.id", "label.stores.name")
	sales := func() []string { titles, _ := m.elements(uris["attr.sales.id"] + "/elements"); return titles }
	stores := func() []string { titles, _ := m.elements(uris["label.stores.name"] + "/elements"); return titles }
	salesBefore, storesBefore := sales(), stores()
	const header = "id,f_amount,stores_id,dt_sold_on_id\n"
	cases := []struct{ name, dataset, csv, want string }{
		{"wrong type", "dataset.sales", header + "7,1,s1,2024-01-01\nx,2,s1,2024-01-01\n", `CSV row 3, column id: "x" is not a valid INT`},
		{"bad decimal", "dataset.sales", header + "7,1.5.2,s1,2024-01-01\n", `CSV row 2, column f_amount: "1.5.2" is not a valid DECIMAL(15,2)`},
		{"bad date", "dataset.sales", header + "7,1,s1,2024-13-01\n", `CSV row 2, column dt_sold_on_id: "2024-13-01" is not a valid DATE`},
		{"unknown reference", "dataset.sales", header + "7,1,s1,2024-01-01\n8,1,s9,2024-01-01\n", `CSV row 3, column stores_id: "s9" is not a loaded key of dataset {dataset.stores}`},
		{"duplicate key", "dataset.sales", header + "7,1,s1,2024-01-01\n8,1,s1,2024-01-01\n7,1,s2,2024-01-01\n", `CSV row 4, column id: key "7" is also in row 2`},
		{"extra field", "dataset.sales", header + "7,1,s1,2024-01-01,x\n", "CSV row 2: the row has 5 fields, the header has 4"},
		{"unknown column", "dataset.stores", "id,nm_name,nm_city,colour\ns1,a,b,c\n", "CSV row 1, column colour: the table has no such column"},
		{"missing column", "dataset.stores", "id,nm_name\ns1,a\n", "CSV row 1, column nm_city: the column is missing"},
		{"column twice", "dataset.stores", "id,nm_name,label.stores.name,nm_city\ns1,a,b,c\n", `CSV row 1, column label.stores.name: column nm_name is given twice`},
		{"no header", "dataset.stores", "", "CSV row 1: the CSV has no header row"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, m.load(tc.dataset, "full", tc.csv), 400, tc.want)
			if got := sales(); !slices.Equal(got, salesBefore) {
				t.Fatalf("sales now %v, were %v", got, salesBefore)
			}
			if got := stores(); !slices.Equal(got, storesBefore) {
				t.Fatalf("stores now %v, were %v", got, storesBefore)
			}
		})
	}
	wantError(t, m.load("dataset.nope", "full", header), 404, "Dataset dataset.nope not found")
	wantError(t, m.load("sold_on.dataset.dt", "full", header), 400, "is a date dimension")
	wantError(t, m.load("dataset.sales", "sometimes", header), 400, "Field mode must be full or incremental")
	wantStatus(t, m.b.do("POST", m.md+"/datasets/dataset.sales/data", header, "Content-Type", "application/json"), 415)
}

func TestModelBadObjects(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := loadedSales(t, b, admin)
	other := loadedSales(t, b, admin)
	uris := m.uris("fact.sales.amount", "label.stores.name", "label.stores.city", "attr.stores.id", "sold_on.year")
	otherFact := other.uris("fact.sales.amount")["fact.sales.amount"]
	amount := m.create(metricJSON("Amount", "SELECT SUM({fact.sales.amount})"))
	_, elems := m.elements(uris["label.stores.name"] + "/elements")
	def := func(content string) string {
		return `{"reportDefinition":{"meta":{"title":"D"},"content":` + content + `}}`
	}
	const field = "metric.content.expression"
	cases := []struct {
		name, body, want string
	}{
		{"unknown fact", metricJSON("M", "SELECT SUM({fact.nope})"), field + " no object of the project has identifier {fact.nope}"},
		{"another project's URI", metricJSON("M", "SELECT SUM(["+otherFact+"])"), "is an object of another project"},
		{"another project's object", metricJSON("M", "SELECT SUM(["+m.md+"/obj/"+id(otherFact)+"])"), "is not an object of this project"},
		{"syntax error", metricJSON("M", "SELECT SUM({fact.sales.amount}"), field + " syntax error at line 1, column 31: unexpected end of input"},
		{"fact outside an aggregation", metricJSON("M", "SELECT {fact.sales.amount}"), "is the fact {fact.sales.amount}; aggregate it"},
		{"attribute in SUM", metricJSON("M", "SELECT SUM({attr.stores.id})"), "is the attribute {attr.stores.id}, not a fact to aggregate with SUM"},
		{"fact in a condition", metricJSON("M", "SELECT SUM({fact.sales.amount}) WHERE {fact.sales.amount} = 1"), "not an attribute or label to compare"},
		{"element of another attribute", metricJSON("M", "SELECT SUM({fact.sales.amount}) WHERE {sold_on.year} IN (["+elems[0]+"])"),
			"is an element of {attr.stores.id}, not of {sold_on.year}"},
		{"missing title", `{"metric":{"meta":{},"content":{"expression":"SELECT 1"}}}`, "Field metric.meta.title is required"},
		{"bad identifier", `{"metric":{"meta":{"title":"x","identifier":"a b"},"content":{"expression":"SELECT 1"}}}`, "Field metric.meta.identifier must be"},
		{"taken identifier", `{"metric":{"meta":{"title":"x","identifier":"fact.sales.amount"},"content":{"expression":"SELECT 1"}}}`, "identifier fact.sales.amount is already used"},
		{"two objects", `{"metric":{"meta":{"title":"x"},"content":{"expression":"SELECT 1"}},"report":{"meta":{"title":"y"},"content":{"definitions":[]}}}`, "exactly one of"},
		{"model object", `{"attribute":{"meta":{"title":"x"},"content":{}}}`, "belong to the data model"},
		{"grid metric that is a fact", def(`{"grid":{"rows":[],"columns":["metricGroup"],"metrics":[{"uri":"` + uris["fact.sales.amount"] + `","alias":""}]}}`),
			"Field reportDefinition.content.grid.metrics[0].uri " + "[" + uris["fact.sales.amount"] + "] is the fact {fact.sales.amount}, not a metric"},
		{"grid attribute that does not exist", def(`{"grid":{"rows":[{"attribute":{"uri":"` + m.md + `/obj/99999"}}],"columns":[],"metrics":[]}}`),
			"Field reportDefinition.content.grid.rows[0].attribute.uri"},
		{"grid item", def(`{"grid":{"rows":["metrics"],"columns":[],"metrics":[]}}`), `Field reportDefinition.content.grid.rows[0] must be "metricGroup"`},
		{"two metric groups", def(`{"grid":{"rows":["metricGroup"],"columns":["metricGroup"],"metrics":[]}}`), "metricGroup may appear once"},
		{"bad format", def(`{"format":"table","grid":{}}`), "Field reportDefinition.content.format must be grid, chart or oneNumber"},
		{"chart without type", def(`{"format":"chart","grid":{},"chart":{"type":"radar"}}`), "Field reportDefinition.content.chart.type must be bar, line or pie"},
		{"filter syntax", def(`{"grid":{},"filters":[{"expression":"[` + uris["label.stores.city"] + `] IN"}]}`), "Field reportDefinition.content.filters[0].expression syntax error at line 1"},
		{"report of a metric", `{"report":{"meta":{"title":"R"},"content":{"domains":[],"definitions":["` + amount + `"]}}}`, "is the metric"},
		{"report without definitions", `{"report":{"meta":{"title":"R"},"content":{"domains":[],"definitions":[]}}}`, "needs at least one report definition"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status := 400
			if tc.name == "taken identifier" {
				status = 409
			}
			wantError(t, m.b.do("POST", m.md+"/obj", tc.body), status, tc.want)
		})
	}
	if got := entries(t, dig(m.get(m.md+"/query/metrics"), "query", "entries")); len(got) != 1 {
		t.Fatalf("metrics after bad requests: %v", got)
	}

	t.Run("a metric cannot use itself", func(t *testing.T) {
		twice := m.create(metricJSON("Twice", "SELECT ["+amount+"] * 2"))
		wantError(t, admin.do("PUT", amount, metricJSON("Amount", "SELECT ["+twice+"] + 1")), 400, "uses this metric")
		wantError(t, admin.do("PUT", amount, metricJSON("Amount", "SELECT ["+amount+"] + 1")), 400, "is this metric")
		wantError(t, admin.do("PUT", amount, `{"report":{"meta":{"title":"R"},"content":{"domains":[],"definitions":[]}}}`), 400, "is a metric, not a report")
	})
	t.Run("model objects are read-only", func(t *testing.T) {
		wantError(t, admin.do("DELETE", uris["attr.stores.id"], ""), 400, "change it with MAQL")
		wantError(t, admin.do("PUT", uris["attr.stores.id"], metricJSON("x", "SELECT 1")), 400, "change it with MAQL")
	})
	t.Run("unknown objects", func(t *testing.T) {
		wantError(t, admin.do("GET", m.md+"/obj/99999", ""), 404, "Object ID 99999 not found")
		wantError(t, admin.do("GET", m.md+"/obj/"+id(otherFact), ""), 404, "not found")
		wantError(t, admin.do("GET", m.md+"/obj/abc", ""), 404, "Object ID abc not found")
		wantError(t, admin.do("GET", m.md+"/query/widgets", ""), 404, "Query widgets")
		wantError(t, admin.do("GET", amount+"/elements", ""), 400, "only attributes and labels have elements")
	})
}

func TestModelPermissions(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := loadedSales(t, b, admin)
	ctx := context.Background()
	_, viewerURI := b.NewUser(t, "viewer@example.com")
	role, err := b.Admin.RoleURI(ctx, "/svc/projects/"+m.pid, "readOnlyUserRole")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Admin.AddProjectUser(ctx, "/svc/projects/"+m.pid, viewerURI, role); err != nil {
		t.Fatal(err)
	}
	viewer := newBrowser(t, b.URL, "ua-viewer")
	viewer.loginWithToken("viewer@example.com", "S3cret-pass")
	stranger := newBrowser(t, b.URL, "ua-stranger")
	b.NewUser(t, "stranger@example.com")
	stranger.loginWithToken("stranger@example.com", "S3cret-pass")
	v := &mdClient{t: t, b: viewer, pid: m.pid, md: m.md}
	if len(v.uris("fact.sales.amount")) != 1 {
		t.Fatal("a viewer cannot read identifiers")
	}
	wantStatus(t, viewer.do("GET", m.md+"/query/facts", ""), 200)
	wantStatus(t, v.manage("CREATE DATASET {d}"), 403)
	wantStatus(t, v.load("dataset.stores", "full", storesCSV), 403)
	wantStatus(t, viewer.do("POST", m.md+"/obj", metricJSON("M", "SELECT SUM({fact.sales.amount})")), 403)
	wantStatus(t, stranger.do("GET", m.md+"/query/facts", ""), 404)
}
