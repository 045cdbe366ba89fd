package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/store"
)

// storesMAQL is a model of stores, their managers (each with an e-mail
// address, of one store) and the stores' sales on days.
const storesMAQL = `CREATE DATASET {dataset.stores} VISUAL(TITLE "Stores");
CREATE ATTRIBUTE {attr.stores.id} VISUAL(TITLE "Store") AS KEYS {f_stores.id} FULLSET;
ALTER DATASET {dataset.stores} ADD {attr.stores.id};
ALTER ATTRIBUTE {attr.stores.id} ADD LABELS {label.stores.name} VISUAL(TITLE "Store") AS {f_stores.nm_name};
ALTER ATTRIBUTE {attr.stores.id} DEFAULT LABEL {label.stores.name};
CREATE DATASET {dataset.managers} VISUAL(TITLE "Managers");
CREATE ATTRIBUTE {attr.managers.id} VISUAL(TITLE "Manager") AS KEYS {f_managers.id} FULLSET;
ALTER DATASET {dataset.managers} ADD {attr.managers.id};
ALTER ATTRIBUTE {attr.managers.id} ADD LABELS {label.managers.email} VISUAL(TITLE "E-mail") AS {f_managers.nm_email};
ALTER ATTRIBUTE {attr.managers.id} DEFAULT LABEL {label.managers.email};
ALTER ATTRIBUTE {attr.stores.id} ADD KEYS {f_managers.stores_id};
INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "sold_on", TITLE "Sold On");
CREATE DATASET {dataset.sales} VISUAL(TITLE "Sales");
CREATE ATTRIBUTE {attr.sales.id} VISUAL(TITLE "Sale") AS KEYS {f_sales.id} FULLSET;
CREATE FACT {fact.sales.amount} VISUAL(TITLE "Amount") AS {f_sales.f_amount};
ALTER DATASET {dataset.sales} ADD {attr.sales.id}, {fact.sales.amount};
ALTER ATTRIBUTE {attr.stores.id} ADD KEYS {f_sales.stores_id};
ALTER ATTRIBUTE {sold_on.date} ADD KEYS {f_sales.dt_sold_on_id};
ALTER DATATYPE {f_sales.id} INT;
ALTER DATATYPE {f_sales.f_amount} DECIMAL(15,2);
SYNCHRONIZE {dataset.stores}, {dataset.managers}, {dataset.sales};`

// salesPerStore is how many sales each store has, over 2024.
const salesPerStore = 200

// world is the benchmark's project: stores s0..s<n-1> with their sales, a
// revenue metric and a report of each store's sales by month.
type world struct {
	h      *benchapp.Herald
	pid    string
	md     string
	stores int
	ids    map[string]string
	// revenue is the metric, byMonth the report of sales by store and month.
	revenue, byMonth string
}

func setUp(ctx context.Context, h *benchapp.Herald, stores int) *world {
	c := h.Client
	uri, err := c.CreateProject(ctx, "Recipients bench", "")
	if err != nil {
		log.Fatal(err)
	}
	w := &world{h: h, pid: strings.TrimPrefix(uri, "/svc/projects/"), stores: stores}
	w.md = "/svc/md/" + w.pid
	w.do(ctx, "POST", w.md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": storesMAQL}}, nil)
	w.load(ctx, "dataset.stores", func(bw *bufio.Writer) {
		fmt.Fprintln(bw, "id,nm_name")
		for i := range stores {
			fmt.Fprintf(bw, "s%d,Store %d\n", i, i)
		}
	})
	w.load(ctx, "dataset.sales", func(bw *bufio.Writer) {
		fmt.Fprintln(bw, "id,f_amount,stores_id,dt_sold_on_id")
		for i := range stores * salesPerStore {
			fmt.Fprintf(bw, "%d,%d.%02d,s%d,2024-%02d-%02d\n", i+1, (i*7919)%10_000, i%100, i%stores, i%12+1, i%28+1)
		}
	})
	var ids struct {
		Identifiers []struct{ Identifier, URI string } `json:"identifiers"`
	}
	w.do(ctx, "POST", w.md+"/identifiers", map[string]any{"identifierToUri": []string{"attr.stores.id", "label.stores.name",
		"label.managers.email", "attr.managers.id", "sold_on.month.mmmyyyy"}}, &ids)
	w.ids = map[string]string{}
	for _, id := range ids.Identifiers {
		w.ids[id.Identifier] = id.URI
	}
	w.revenue = w.create(ctx, map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Revenue"},
		"content": map[string]any{"expression": "SELECT SUM({fact.sales.amount})", "format": "#,##0.00"}}})
	w.byMonth = w.report(ctx, "Sales by month", w.revenue, w.ids["label.stores.name"], w.ids["sold_on.month.mmmyyyy"])
	return w
}

// members makes n members of the project, each with the user filter of one
// store, and a subscription to every viewer of the project, and returns the
// subscription's id.
func (w *world) members(ctx context.Context, n int) string {
	st := w.h.App.Store()
	now := time.Now()
	var filters []int64
	for _, el := range w.elements(ctx) {
		uri := w.create(ctx, map[string]any{"userFilter": map[string]any{"meta": map[string]any{"title": el.Title},
			"content": map[string]any{"expression": "[" + w.ids["attr.stores.id"] + "] IN ([" + el.URI + "])"}}})
		filters = append(filters, objectID(uri))
	}
	for start := 0; start < n; start += 500 {
		var changes []store.MemberChange
		for i := start; i < min(start+500, n); i++ {
			id := fmt.Sprintf("member%06d", i)
			if err := st.CreateUser(ctx, store.User{ID: id, Domain: "default", Login: id + "@example.com", PasswordHash: "-",
				Created: now, Updated: now}); err != nil {
				log.Fatal(err)
			}
			changes = append(changes, store.MemberChange{UserID: id, Status: store.MemberEnabled, Roles: []string{"readOnlyUserRole"}, Add: true})
		}
		if _, err := st.ApplyMemberChanges(ctx, w.pid, store.RoleAdmin, changes, now); err != nil {
			log.Fatal(err)
		}
	}
	for i := range n {
		if err := st.SetUserFilters(ctx, w.pid, fmt.Sprintf("member%06d", i), []int64{filters[i%len(filters)]}); err != nil {
			log.Fatal(err)
		}
	}
	return w.subscribe(ctx, map[string]any{
		"recipients":  map[string]any{"roles": []any{"/svc/projects/" + w.pid + "/roles/3"}, "via": []any{"email"}},
		"attachments": []any{map[string]any{"report": w.byMonth, "formats": []any{"PDF", "XLS"}}},
	})
}

// burst loads rows of managers spread over the stores and a subscription
// bursting from them, and returns its id.
func (w *world) burst(ctx context.Context, rows int) string {
	w.load(ctx, "dataset.managers", func(bw *bufio.Writer) {
		fmt.Fprintln(bw, "id,nm_email,stores_id")
		for i := range rows {
			fmt.Fprintf(bw, "m%d,manager%06d@example.com,s%d\n", i, i, i%w.stores)
		}
	})
	count := w.create(ctx, map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Managers"},
		"content": map[string]any{"expression": "SELECT COUNT({attr.managers.id})", "format": "#,##0"}}})
	managers := w.report(ctx, "Managers", count, w.ids["label.managers.email"], w.ids["label.stores.name"])
	return w.subscribe(ctx, map[string]any{
		"burst": map[string]any{"report": managers, "address": w.ids["label.managers.email"], "by": w.ids["attr.stores.id"],
			"via": "email"},
		"attachments": []any{map[string]any{"report": w.byMonth, "formats": []any{"CSV"}}},
	})
}

// subscribe creates a subscription of the admin's, hourly at minute 0, with
// the given fields, and returns its id.
func (w *world) subscribe(ctx context.Context, fields map[string]any) string {
	sub := map[string]any{
		"triggers":  []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 * * * *"}}},
		"condition": map[string]any{"condition": map[string]any{"expression": "true"}},
		"subject":   map[string]any{"template": map[string]any{"expression": "Your store"}},
		"message":   map[string]any{"template": map[string]any{"expression": "Revenue of your store: ${f:executeMetric('" + w.revenue + "')}"}},
		"meta":      map[string]any{"title": "Store report"},
	}
	for k, v := range fields {
		sub[k] = v
	}
	var out struct {
		Subscription struct {
			Meta struct{ URI string } `json:"meta"`
		} `json:"subscription"`
	}
	w.do(ctx, "POST", "/svc/projects/"+w.pid+"/users/"+strings.TrimPrefix(w.h.Profile, "/svc/account/profile/")+"/subscriptions",
		map[string]any{"subscription": sub}, &out)
	uri := out.Subscription.Meta.URI
	return uri[strings.LastIndexByte(uri, '/')+1:]
}

// element is an element of the stores.
type element struct{ Title, URI string }

// elements lists the stores' elements.
func (w *world) elements(ctx context.Context) []element {
	var out struct {
		AttributeElements struct {
			Elements []element `json:"elements"`
		} `json:"attributeElements"`
	}
	w.do(ctx, "GET", w.ids["attr.stores.id"]+"/elements?limit=10000", nil, &out)
	return out.AttributeElements.Elements
}

// report makes a report of the metric by the labels, and returns its URI.
func (w *world) report(ctx context.Context, title, metric string, labels ...string) string {
	var rows []any
	for _, l := range labels {
		rows = append(rows, map[string]any{"attribute": map[string]any{"uri": l, "alias": ""}})
	}
	def := w.create(ctx, map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": title},
		"content": map[string]any{"format": "grid", "grid": map[string]any{"rows": rows, "columns": []any{"metricGroup"},
			"metrics": []any{map[string]any{"uri": metric, "alias": ""}}}}}})
	return w.create(ctx, map[string]any{"report": map[string]any{"meta": map[string]any{"title": title},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}})
}

func (w *world) create(ctx context.Context, obj map[string]any) string {
	var out struct{ URI string }
	w.do(ctx, "POST", w.md+"/obj", obj, &out)
	return out.URI
}

func (w *world) do(ctx context.Context, method, path string, body, out any) {
	if err := w.h.Client.Do(ctx, method, path, body, out); err != nil {
		log.Fatalf("%s %s: %v", method, path, err)
	}
}

// load streams a CSV written by fill into a dataset.
func (w *world) load(ctx context.Context, dataset string, fill func(*bufio.Writer)) {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 1<<20)
		fill(bw)
		pw.CloseWithError(bw.Flush())
	}()
	if _, err := benchapp.PostCSV(ctx, w.h.Client, w.h.App.URL()+w.md+"/datasets/"+dataset+"/data?mode=full", pr); err != nil {
		log.Fatalf("%s: %v", dataset, err)
	}
}

// objectID is the id of an object URI.
func objectID(uri string) int64 {
	var id int64
	if _, err := fmt.Sscanf(uri[strings.LastIndexByte(uri, '/')+1:], "%d", &id); err != nil {
		log.Fatalf("object URI %s: %v", uri, err)
	}
	return id
}

// detail is what the benchmark reads of a run's detail.
type detail struct {
	recipients, slices, skipped, rows int
	timings                           map[string]int64
}

func runDetail(run store.Run) detail {
	var d struct {
		Skipped   int              `json:"skipped"`
		TimingsMS map[string]int64 `json:"timingsMs"`
		Audience  struct {
			Recipients, Slices, Rows int
		} `json:"audience"`
	}
	if err := json.Unmarshal(run.Detail, &d); err != nil {
		log.Fatal(err)
	}
	return detail{recipients: d.Audience.Recipients, slices: d.Audience.Slices, skipped: d.Skipped, rows: d.Audience.Rows,
		timings: d.TimingsMS}
}
