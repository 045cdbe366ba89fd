package xtab

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/store"
)

// regionFilter makes a user filter of the demo project restricting the
// region to the elements titled names, and returns its URI and expression.
func regionFilter(t *testing.T, e *env, names ...string) (string, string) {
	t.Helper()
	ctx := context.Background()
	attr := uriOf(t, e, "attr.regions.id")
	els, err := e.md.Elements(ctx, e.pid, mustID(t, e, "attr.regions.id"), analytics.ElementsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, el := range els.Items {
		if slices.Contains(names, el.Title) {
			in = append(in, "["+attr+"/elements?id="+itoa(el.ID)+"]")
		}
	}
	expr := "[" + attr + "] IN (" + strings.Join(in, ", ") + ")"
	o, err := e.md.CreateObject(ctx, e.pid, "u", analytics.Input{Title: strings.Join(names, "+"),
		UserFilter: &analytics.UserFilterContent{Expression: expr}})
	if err != nil {
		t.Fatal(err)
	}
	return o.URI, expr
}

// TestUserFiltersRestrictEveryExecution: an execution of a user with user
// filters sees only their slice, in every metric (a share over all regions
// too), its result is of its own and of that slice, and only a user of the
// same slice reads it; users of one slice share one result.
func TestUserFiltersRestrictEveryExecution(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	now := e.clock()
	for _, id := range []string{"east", "east2", "west"} {
		if err := e.st.CreateUser(ctx, store.User{ID: id, Domain: "d", Login: id + "@x.io", PasswordHash: "x", Created: now, Updated: now}); err != nil {
			t.Fatal(err)
		}
	}
	east, _ := regionFilter(t, e, "East")
	west, _ := regionFilter(t, e, "West", "North")
	for user, f := range map[string]string{"east": east, "east2": east, "west": west} {
		if err := e.md.Assign(ctx, e.pid, user, []string{f}); err != nil {
			t.Fatal(err)
		}
	}
	src := Source{Report: e.demo.Reports["report.revenue_by_region"]}
	results := map[string]Result{}
	for _, user := range []string{"u", "east", "east2", "west"} {
		res, err := e.ex.Execute(ctx, e.pid, user, src)
		if err != nil {
			t.Fatal(err)
		}
		results[user] = res
		g, err := e.ex.ResultGrid(ctx, e.pid, res.DataID)
		if err != nil {
			t.Fatal(err)
		}
		var regions []string
		for r, err := range g.Rows {
			if err != nil {
				t.Fatal(err)
			}
			regions = append(regions, r.Headers[0])
		}
		want := map[string][]string{"u": {"Central", "East", "North", "South", "West"}, "east": {"East"}, "east2": {"East"},
			"west": {"North", "West"}}[user]
		slices.Sort(regions)
		if !slices.Equal(regions, want) {
			t.Errorf("%s sees regions %v, want %v", user, regions, want)
		}
	}
	if results["east"].DataID != results["east2"].DataID {
		t.Errorf("two users of one slice made two results")
	}
	if results["east"].DataID == results["u"].DataID || results["east"].DataID == results["west"].DataID {
		t.Errorf("users of other slices share a result")
	}
	for _, c := range []struct {
		user, of string
		ok       bool
	}{{"east", "east2", true}, {"east", "u", false}, {"u", "east", false}, {"west", "east", false}, {"u", "u", true}} {
		err := e.ex.Visible(ctx, e.pid, c.user, results[c.of].ID)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNoResult)) {
			t.Errorf("%s reading %s's result: %v, want visible %v", c.user, c.of, err, c.ok)
		}
	}
	// A share over every region is a share of the user's regions.
	share := e.demo.Metrics["metric.region_share"]
	def := &analytics.ReportDefinitionContent{Format: "grid", Grid: analytics.Grid{
		Rows: []analytics.GridItem{}, Columns: []analytics.GridItem{{MetricGroup: true}},
		Metrics: []analytics.GridMetric{{URI: share}}}}
	res, err := e.ex.Execute(ctx, e.pid, "east", Source{Content: def})
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.ex.ResultGrid(ctx, e.pid, res.DataID)
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range g.Rows {
		if err != nil || r.Values[0] == nil || *r.Values[0] < 0.999 {
			t.Errorf("the share of the user's only region over all regions: %v %v", r.Values, err)
		}
	}
	// Changing the filter changes what the next execution sees.
	if err := e.md.Assign(ctx, e.pid, "east", []string{west}); err != nil {
		t.Fatal(err)
	}
	if err := e.ex.Visible(ctx, e.pid, "east", results["east"].ID); !errors.Is(err, ErrNoResult) {
		t.Errorf("a result of the user's old slice is still visible: %v", err)
	}
	again, err := e.ex.Execute(ctx, e.pid, "east", src)
	if err != nil || again.DataID != results["west"].DataID {
		t.Errorf("after the change: %v %v, want the west slice's result", again.DataID, err)
	}
}

// TestSliceElements: an element listing of a user with user filters shows
// the elements of their slice: the filtered attribute's own, and another
// attribute's related through the sales.
func TestSliceElements(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	_, expr := regionFilter(t, e, "East")
	sl := analytics.NewSlice(expr)
	els, err := e.md.Elements(ctx, e.pid, mustID(t, e, "label.regions.name"), analytics.ElementsRequest{Slice: sl})
	if err != nil {
		t.Fatal(err)
	}
	if els.Total != 1 || len(els.Items) != 1 || els.Items[0].Title != "East" {
		t.Errorf("regions of the East slice: %+v", els)
	}
	all, err := e.md.Elements(ctx, e.pid, mustID(t, e, "label.products.name"), analytics.ElementsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	some, err := e.md.Elements(ctx, e.pid, mustID(t, e, "label.products.name"), analytics.ElementsRequest{Slice: sl})
	if err != nil || some.Total == 0 || some.Total > all.Total {
		t.Errorf("products of the East slice: %d of %d, %v", some.Total, all.Total, err)
	}
	// Nothing of the slice: none, not all.
	none, err := e.md.Elements(ctx, e.pid, mustID(t, e, "label.regions.name"), analytics.ElementsRequest{Slice: sl,
		IDs: []int64{els.Items[0].ID + 1000}})
	if err != nil || none.Total != 0 || len(none.Items) != 0 {
		t.Errorf("an element outside the slice: %+v %v", none, err)
	}
}
