package maql

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseFilter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  string
		want Cond
		text string
	}{
		{"element list", "[/svc/md/p1/obj/123] IN ([/svc/md/p1/obj/123/elements?id=2015])",
			In{Left: uri("123"), Values: []Value{ElementRef{Obj: uri("123"), ID: 2015}}},
			"[/svc/md/p1/obj/123] IN ([/svc/md/p1/obj/123/elements?id=2015])"},
		{"and of comparisons", `{attr.status} <> "Closed" and {attr.year} >= 2020`,
			And{Left: Compare{Left: ident("attr.status"), Op: OpNe, Right: Text{Value: "Closed"}},
				Right: Compare{Left: ident("attr.year"), Op: OpGe, Right: Number{Lit: "2020"}}},
			`{attr.status} <> "Closed" AND {attr.year} >= 2020`},
		{"not in parentheses", `NOT ({a} = 1 OR {b} NOT IN ("x"))`,
			Not{Cond: Or{Left: Compare{Left: ident("a"), Op: OpEq, Right: Number{Lit: "1"}},
				Right: In{Left: ident("b"), Not: true, Values: []Value{Text{Value: "x"}}}}},
			`NOT ({a} = 1 OR {b} NOT IN ("x"))`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFilter(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.Cond, tc.want) {
				t.Fatalf("got %#v\nwant %#v", f.Cond, tc.want)
			}
			if got := f.String(); got != tc.text {
				t.Fatalf("String() = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		src       string
		line, col int
		token     string
	}{
		{"empty", "", 1, 1, ""},
		{"a metric is not a filter", "SELECT SUM({f})", 1, 1, "SELECT"},
		{"trailing text", `{a} = 1 {b}`, 1, 9, "{b}"},
		{"missing value", "{a} IN ()", 1, 9, ")"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFilter(tc.src)
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if perr.Line != tc.line || perr.Col != tc.col || perr.Token != tc.token {
				t.Fatalf("error at %d:%d %q, want %d:%d %q (%v)", perr.Line, perr.Col, perr.Token, tc.line, tc.col, tc.token, err)
			}
		})
	}
}

func TestFilterRefsAndRewrite(t *testing.T) {
	t.Parallel()
	f, err := ParseFilter(`{attr.a} IN ([/svc/md/p1/obj/9/elements?id=1]) AND {attr.b} = "x"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{ident("attr.a"), uri("9"), ident("attr.b")}
	if got := f.Refs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Refs = %v, want %v", got, want)
	}
	ids := map[string]string{"attr.a": "1", "attr.b": "2"}
	err = f.Rewrite(func(r Ref) (Ref, error) {
		if r.Identifier != "" {
			return uri(ids[r.Identifier]), nil
		}
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const text = `[/svc/md/p1/obj/1] IN ([/svc/md/p1/obj/9/elements?id=1]) AND [/svc/md/p1/obj/2] = "x"`
	if got := f.String(); got != text {
		t.Fatalf("rewritten = %q, want %q", got, text)
	}
	boom := errors.New("boom")
	if err := f.Rewrite(func(Ref) (Ref, error) { return Ref{}, boom }); !errors.Is(err, boom) || f.String() != text {
		t.Fatalf("failed rewrite: %v, filter now %q", err, f.String())
	}
}

func FuzzParseFilter(f *testing.F) {
	f.Add("[/svc/md/p1/obj/123] IN ([/svc/md/p1/obj/123/elements?id=2015])")
	f.Add(`NOT ({a} = 1 OR {b} NOT IN ("x", -2.5)) AND {c} <= "q"`)
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := ParseFilter(src)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || perr.Line < 1 || perr.Col < 1 {
				t.Fatalf("ParseFilter(%q) error %#v is not a positioned *Error", src, err)
			}
			return
		}
		text := flt.String()
		again, err := ParseFilter(text)
		if err != nil {
			t.Fatalf("ParseFilter(%q) parsed, its canonical form %q did not: %v", src, text, err)
		}
		if !reflect.DeepEqual(again, flt) {
			t.Fatalf("round trip of %q through %q changed the tree", src, text)
		}
	})
}
