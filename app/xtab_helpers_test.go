package app_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// shopMAQL is a model of regions, products with a category, and orders of products in
// regions on a date.
const shopMAQL = `CREATE DATASET {dataset.regions} VISUAL(TITLE "Regions");
CREATE ATTRIBUTE {attr.regions.id} VISUAL(TITLE "Region") AS KEYS {f_regions.id} FULLSET;
ALTER DATASET {dataset.regions} ADD {attr.regions.id};
ALTER ATTRIBUTE {attr.regions.id} ADD LABELS {label.regions.name} VISUAL(TITLE "Region") AS {f_regions.nm_name};
ALTER ATTRIBUTE {attr.regions.id} DEFAULT LABEL {label.regions.name};
CREATE DATASET {dataset.products} VISUAL(TITLE "Products");
CREATE ATTRIBUTE {attr.products.id} VISUAL(TITLE "Product") AS KEYS {f_products.id} FULLSET;
CREATE ATTRIBUTE {attr.products.category} VISUAL(TITLE "Category") AS KEYS {f_products.category};
ALTER DATASET {dataset.products} ADD {attr.products.id}, {attr.products.category};
ALTER ATTRIBUTE {attr.products.id} ADD LABELS {label.products.name} VISUAL(TITLE "Product") AS {f_products.nm_name};
ALTER ATTRIBUTE {attr.products.id} DEFAULT LABEL {label.products.name};
ALTER DATATYPE {f_products.id} INT;
INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "ordered_on", TITLE "Ordered On");
CREATE DATASET {dataset.orders} VISUAL(TITLE "Orders");
CREATE ATTRIBUTE {attr.orders.id} VISUAL(TITLE "Order") AS KEYS {f_orders.id} FULLSET;
CREATE FACT {fact.orders.amount} VISUAL(TITLE "Amount") AS {f_orders.f_amount};
CREATE FACT {fact.orders.qty} VISUAL(TITLE "Quantity") AS {f_orders.f_qty};
ALTER DATASET {dataset.orders} ADD {attr.orders.id}, {fact.orders.amount}, {fact.orders.qty};
ALTER ATTRIBUTE {attr.regions.id} ADD KEYS {f_orders.regions_id};
ALTER ATTRIBUTE {attr.products.id} ADD KEYS {f_orders.products_id};
ALTER ATTRIBUTE {ordered_on.date} ADD KEYS {f_orders.dt_ordered_on_id};
ALTER DATATYPE {f_orders.id} INT;
ALTER DATATYPE {f_orders.f_qty} INT;
SYNCHRONIZE {dataset.regions}, {dataset.products}, {dataset.orders};`

// crafted is a region name that would break a query that pasted it into SQL.
const crafted = "'); DROP TABLE x; --"

var regionNames = map[string]string{"r1": "North", "r2": "South", "r3": "East", "r4": "West", "r5": "Central", "r6": crafted}

var categories = []string{"Books", "Games", "Music", "Tools"}

type shopOrder struct {
	id, product, qty int
	cents            int64
	region           string
	date             time.Time
}

// shop is the data of the shop model, generated from a seed.
type shop struct {
	products map[int]string // id -> category
	orders   []shopOrder
}

func newShop(products, orders int) *shop {
	rng := rand.New(rand.NewPCG(7, 11))
	s := &shop{products: map[int]string{}}
	for id := 1; id <= products; id++ {
		s.products[id] = categories[rng.IntN(len(categories))]
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for id := 1; id <= orders; id++ {
		s.orders = append(s.orders, shopOrder{id: id, product: 1 + rng.IntN(products), qty: 1 + rng.IntN(5),
			cents: 100 + rng.Int64N(100_000), region: "r" + strconv.Itoa(1+rng.IntN(len(regionNames))),
			date: start.AddDate(0, 0, rng.IntN(731))})
	}
	return s
}

func (s *shop) csvs() (regions, products, orders string) {
	var b strings.Builder
	b.WriteString("id,nm_name\n")
	for i := 1; i <= len(regionNames); i++ {
		id := "r" + strconv.Itoa(i)
		fmt.Fprintf(&b, "%s,%q\n", id, regionNames[id])
	}
	regions = b.String()
	b.Reset()
	b.WriteString("id,nm_name,category\n")
	for id := 1; id <= len(s.products); id++ {
		fmt.Fprintf(&b, "%d,%s,%s\n", id, productName(id), s.products[id])
	}
	products = b.String()
	b.Reset()
	b.WriteString("id,f_amount,f_qty,regions_id,products_id,dt_ordered_on_id\n")
	for _, o := range s.orders {
		fmt.Fprintf(&b, "%d,%d.%02d,%d,%s,%d,%s\n", o.id, o.cents/100, o.cents%100, o.qty, o.region, o.product, o.date.Format(time.DateOnly))
	}
	return regions, products, b.String()
}

func productName(id int) string { return fmt.Sprintf("Product %04d", id) }

// loadShop creates a project with the shop model and data, and returns its client.
func loadShop(t *testing.T, b *apptest.Bundle, admin *browser, s *shop) *mdClient {
	t.Helper()
	m := newMD(t, b, admin)
	wantStatus(t, m.manage(shopMAQL), 200)
	regions, products, orders := s.csvs()
	wantStatus(t, m.load("dataset.regions", "full", regions), 200)
	wantStatus(t, m.load("dataset.products", "full", products), 200)
	wantStatus(t, m.load("dataset.orders", "full", orders), 200)
	return m
}

// xtab is a data result as the wire has it.
type xtab struct {
	Rows, Columns axisJSON
	Data          [][]*string
	OverallSize   sizeJSON `json:"overall_size"`
	Offset, Size  sizeJSON
}

type axisJSON struct {
	Lookups []map[string]string
	Tree    nodeJSON
}

type nodeJSON struct {
	ID          *string
	Type        string
	First, Last int
	Index       map[string][]int
	Children    []nodeJSON
}

type sizeJSON struct{ Rows, Columns int }

// execute posts a report request and returns the reply.
func (m *mdClient) execute(req map[string]any) reply {
	m.t.Helper()
	return m.b.do("POST", "/svc/xtab2/executor3", jsonString(map[string]any{"report_req": req}))
}

// content is a report request of a definition's content.
func (m *mdClient) content(def map[string]any) map[string]any {
	return map[string]any{"definitionContent": map[string]any{"content": def, "projectMetadata": m.md}}
}

// data polls a data result until it is computed and returns its status and page.
func (m *mdClient) data(uri string) (int, *xtab) {
	m.t.Helper()
	var r reply
	waitFor(m.t, func() bool {
		r = m.b.do("GET", uri, "")
		if r.status == 202 && (r.header.Get("Refresh") != "1" || !strings.HasPrefix(uri, r.json(m.t)["uri"].(string))) {
			m.t.Fatalf("202 without Refresh or uri: %v %s", r.header, r.body)
		}
		return r.status != 202
	})
	if r.status != 200 {
		return r.status, nil
	}
	var body struct {
		X xtab `json:"xtab_data"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		m.t.Fatal(err)
	}
	return 200, &body.X
}

// run executes a report request and returns its computed data (nil when empty).
func (m *mdClient) run(req map[string]any) *xtab {
	m.t.Helper()
	r := m.execute(req)
	wantStatus(m.t, r, 201)
	status, x := m.data(dig(r.json(m.t), "reportResult2", "content", "dataResult").(string))
	if status != 200 && status != 204 {
		m.t.Fatalf("data result: %d", status)
	}
	return x
}

// cells flattens a data result: "row labels|column labels" -> value, labels joined by /.
func (x *xtab) cells(t *testing.T) map[string]float64 {
	t.Helper()
	rows, cols := x.Rows.paths(), x.Columns.paths()
	if len(rows) != len(x.Data) {
		t.Fatalf("%d row headers, %d data rows", len(rows), len(x.Data))
	}
	out := map[string]float64{}
	for i, r := range rows {
		if len(x.Data[i]) != len(cols) {
			t.Fatalf("row %d has %d cells, want %d", i, len(x.Data[i]), len(cols))
		}
		for j, c := range cols {
			if v := x.Data[i][j]; v != nil {
				f, err := strconv.ParseFloat(*v, 64)
				if err != nil {
					t.Fatal(err)
				}
				out[r+"|"+c] = f
			}
		}
	}
	return out
}

// paths returns the label path of each position of an axis, from its tree and lookups.
func (a axisJSON) paths() []string {
	if len(a.Lookups) == 0 {
		return []string{""}
	}
	var out []string
	var walk func(n nodeJSON, depth int, prefix string)
	walk = func(n nodeJSON, depth int, prefix string) {
		if depth > 0 {
			label := a.Lookups[depth-1][*n.ID]
			if prefix != "" {
				label = prefix + "/" + label
			}
			prefix = label
		}
		if depth == len(a.Lookups) {
			for range n.Last - n.First + 1 {
				out = append(out, prefix)
			}
			return
		}
		for _, c := range n.Children {
			walk(c, depth+1, prefix)
		}
	}
	walk(a.Tree, 0, "")
	return out
}

// near reports whether two sums of money agree.
func near(a, b float64) bool {
	d := a - b
	return d < 1e-6*max(1, abs(a)) && -d < 1e-6*max(1, abs(a))
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// compare checks a flattened result against the expected cells.
func compare(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || !near(g, w) {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected cell %s = %v", k, got[k])
		}
	}
}

func gridAttr(uri string) map[string]any {
	return map[string]any{"attribute": map[string]any{"uri": uri, "alias": ""}}
}

func gridDef(rows, cols []any, metrics []string, filters ...string) map[string]any {
	ms := []any{}
	for _, m := range metrics {
		ms = append(ms, map[string]any{"uri": m, "alias": ""})
	}
	fs := []any{}
	for _, f := range filters {
		fs = append(fs, map[string]any{"expression": f})
	}
	return map[string]any{"format": "grid", "grid": map[string]any{"rows": rows, "columns": cols, "metrics": ms}, "filters": fs}
}
