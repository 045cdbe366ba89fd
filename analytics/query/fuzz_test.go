package query

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/maql"
)

// FuzzCompile compiles metrics and filters over the fixture's model: it must not panic,
// and no text of a filter may reach the SQL but through a parameter.
func FuzzCompile(f *testing.F) {
	fx, _ := newFixture(f)
	for _, seed := range [][2]string{
		{"SELECT SUM({fact.sales.amount})", `{label.regions.name} = "x"`},
		{"SELECT {m.share} BY {attr.stores.id}, ALL IN ALL OTHER DIMENSIONS", `{sold_on.year} IN (2024, 2025) OR NOT {attr.sales.channel} <> "web'"`},
		{"SELECT COUNT({attr.sales.id}, {attr.stores.id}) WHERE {label.stores.city} NOT IN (\"a\\\"b\")", `{sold_on.month.mmmyyyy} >= "Jan 2024"`},
		{"SELECT IFNULL(MEDIAN({fact.sales.qty}) / (SELECT MAX({fact.targets.amount}) BY ALL {attr.regions.id}), -1)", `{attr.stores.kind} = 3`},
	} {
		f.Add(seed[0], seed[1], true)
	}
	known := func(r maql.Ref) bool { return r.URI != "" || fx.uris[r.Identifier] != "" }
	f.Fuzz(func(t *testing.T, metric, filter string, byRegion bool) {
		m, err := maql.ParseMetric(metric)
		if err != nil {
			return
		}
		flt, err := maql.ParseFilter(filter)
		if err != nil {
			return
		}
		for _, r := range append(m.Refs(), flt.Refs()...) {
			if !known(r) {
				return
			}
		}
		if m.Rewrite(fx.rewrite(t)) != nil || flt.Rewrite(fx.rewrite(t)) != nil {
			return
		}
		uri := fx.add("fuzz.metric", Object{Category: CategoryMetric, Identifier: "fuzz.metric", Metric: m})
		defer delete(fx.objects, uri)
		req := &Request{Project: pid, Model: fx.model, Objects: fx.objects,
			Metrics: []Part{{URI: uri, Field: "m"}}, Filters: []Filter{{Cond: flt.Cond, Field: "f"}}}
		if byRegion {
			req.Attributes = []Part{{URI: fx.uris["label.regions.name"], Field: "a"}}
		}
		q, err := Compile(req)
		if err != nil {
			return
		}
		for _, text := range texts(flt.Cond) {
			if strings.ContainsAny(text, `'"`) && strings.Contains(q.SQL, text) {
				t.Fatalf("the text %q is in the SQL:\n%s", text, q.SQL)
			}
		}
	})
}

// texts lists the string values of a condition.
func texts(c maql.Cond) []string {
	switch x := c.(type) {
	case maql.And:
		return append(texts(x.Left), texts(x.Right)...)
	case maql.Or:
		return append(texts(x.Left), texts(x.Right)...)
	case maql.Not:
		return texts(x.Cond)
	case maql.Compare:
		if t, ok := x.Right.(maql.Text); ok {
			return []string{t.Value}
		}
	case maql.In:
		var out []string
		for _, v := range x.Values {
			if t, ok := v.(maql.Text); ok {
				out = append(out, t.Value)
			}
		}
		return out
	}
	return nil
}
