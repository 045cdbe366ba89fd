package analytics

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzUserFilter creates user filters of arbitrary expressions over the
// developers: each is stored with URIs, or refused with an *InputError naming
// the expression (or a MAQL syntax error); never another error, never a
// panic; and a stored one is a slice executions can be restricted by.
func FuzzUserFilter(f *testing.F) {
	fx := newFixture(f)
	fx.manage(f, devsScript(f))
	if _, err := fx.load("dataset.devs", devsCSV); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"{attr.devs.id} IN ({attr.devs.id}/elements?id=1)",
		"[/svc/md/P/obj/1] IN ([/svc/md/P/obj/1/elements?id=1], [/svc/md/P/obj/1/elements?id=2])",
		"{label.devs.id.email} = \"a@x.io\"",
		"{attr.devs.id} NOT IN ({attr.devs.id}/elements?id=2) AND {label.devs.id.name} <> \"Bea\"",
		"{attr.devs.id} IN ({attr.devs.id}/elements?id=99)",
		"{fact.commits.lines} IN (1)",
		"1 <> 1",
		"",
		"{attr.devs.id} IN (",
	} {
		f.Add(strings.ReplaceAll(seed, "/P/", "/"+fx.pid+"/"))
	}
	f.Fuzz(func(t *testing.T, expr string) {
		o, err := fx.s.CreateObject(context.Background(), fx.pid, fx.user, Input{Title: "f", UserFilter: &UserFilterContent{Expression: expr}})
		var in *InputError
		switch {
		case errors.As(err, &in):
			if in.Field != CategoryUserFilter+".content.expression" {
				t.Fatalf("%q: refused naming %q", expr, in.Field)
			}
			return
		case err != nil:
			t.Fatalf("%q: %T %v", expr, err, err)
		}
		if err := fx.s.Assign(context.Background(), fx.pid, fx.user, []string{o.URI}); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.s.UserSlice(context.Background(), fx.pid, fx.user); err != nil {
			t.Fatal(err)
		}
		if err := fx.s.Assign(context.Background(), fx.pid, fx.user, nil); err != nil {
			t.Fatal(err)
		}
		if err := fx.s.DeleteObject(context.Background(), fx.pid, o.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSliceIsCanonical: the same conditions make the same slice, whatever
// their order and repeats.
func TestSliceIsCanonical(t *testing.T) {
	t.Parallel()
	a := NewSlice("b", " a ", "b", "")
	b := NewSlice("a", "b")
	if a.Key() != b.Key() || a.Key() != "a\nb" || a.Whole() || !NewSlice().Whole() || NewSlice("  ").Key() != "" {
		t.Errorf("slices %q and %q", a.Key(), b.Key())
	}
}
