package xtab

import (
	"context"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/store"
)

// gridText is what a grid shows: its head, its columns and every row, the
// values written out.
type gridText struct {
	Title, Format, Chart string
	Filters              []string
	RowHeaders, RowKinds []string
	Columns              []grid.Column
	Rows                 []string
}

func textOf(t *testing.T, g *grid.Grid) gridText {
	t.Helper()
	out := gridText{Title: g.Title, Format: g.Format, Chart: g.Chart, Filters: g.Filters, RowHeaders: g.RowHeaders,
		RowKinds: g.RowKinds, Columns: g.Columns}
	for r, err := range g.Rows {
		if err != nil {
			t.Fatal(err)
		}
		line := ""
		for _, h := range r.Headers {
			line += h + "/"
		}
		for _, v := range r.Values {
			if v == nil {
				line += "|-"
			} else {
				line += "|" + itoa(int64(*v*100))
			}
		}
		out.Rows = append(out.Rows, line)
	}
	return out
}

// TestEvaluateIsExecuteInMemory: evaluating each of the demo's reports, as
// its author or over a user's slice of the data, gives the grid that
// executing it and reading its result gives, and keeps nothing: no result,
// no file.
func TestEvaluateIsExecuteInMemory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	now := e.clock()
	if err := e.st.CreateUser(ctx, store.User{ID: "east", Domain: "d", Login: "east@x.io", PasswordHash: "x", Created: now,
		Updated: now}); err != nil {
		t.Fatal(err)
	}
	east, _ := regionFilter(t, e, "East")
	if err := e.md.Assign(ctx, e.pid, "east", []string{east}); err != nil {
		t.Fatal(err)
	}
	idents := slices.Sorted(maps.Keys(e.demo.Reports))
	var evaluated []gridText
	for _, user := range []string{"u", "east"} {
		for _, ident := range idents {
			g, err := e.ex.Evaluate(ctx, e.pid, user, Source{Report: e.demo.Reports[ident]})
			if err != nil {
				t.Fatalf("evaluate %s as %s: %v", ident, user, err)
			}
			evaluated = append(evaluated, textOf(t, g))
		}
	}
	if entries, err := os.ReadDir(e.ex.cfg.Dir); err == nil && len(entries) > 0 || err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("evaluating left files: %v %v", entries, err)
	}
	e.advance(time.Minute) // a result kept by evaluating would be a minute older than the executions'
	i := 0
	for _, user := range []string{"u", "east"} {
		for _, ident := range idents {
			res, err := e.ex.Execute(ctx, e.pid, user, Source{Report: e.demo.Reports[ident]})
			if err != nil {
				t.Fatal(err)
			}
			// Each execution makes its result: evaluating kept none to share.
			if r, err := e.st.ResultByID(ctx, res.DataID); err != nil || !r.Created.Equal(e.clock()) {
				t.Fatalf("%s as %s: the result is of %v, not of the execution (%v): %v", ident, user, r.Created, e.clock(), err)
			}
			g, err := e.ex.ResultGrid(ctx, e.pid, res.DataID)
			if err != nil {
				t.Fatal(err)
			}
			if want := textOf(t, g); !reflect.DeepEqual(evaluated[i], want) {
				t.Errorf("%s as %s:\nevaluated %+v\nexecuted  %+v", ident, user, evaluated[i], want)
			}
			i++
		}
	}
	k := slices.Index(idents, "report.revenue_by_region")
	if all, east := evaluated[k].Rows, evaluated[len(idents)+k].Rows; len(east) != 1 || len(all) <= len(east) {
		t.Errorf("revenue by region: %q for the author, %q over the East's slice", all, east)
	}
}

// TestEvaluateFailsPastTheTimeout: a computation that cannot start within
// the timeout is a FailedError that names it.
func TestEvaluateFailsPastTheTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{PerProject: 1, Timeout: time.Nanosecond})
	ctx := context.Background()
	release, err := e.ex.acquire(ctx, e.pid) // the project's one place, taken
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = e.ex.Evaluate(ctx, e.pid, "u", Source{Report: e.demo.Reports["report.revenue_by_region"]})
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Msg != "the report took longer than 1ns to compute" {
		t.Fatalf("err = %v", err)
	}
}
