package maql

import (
	"errors"
	"reflect"
	"testing"
)

const obj = "/svc/md/p1/obj/"

func uri(id string) Ref   { return Ref{URI: obj + id} }
func ident(id string) Ref { return Ref{Identifier: id} }
func sum(e Expr) Agg      { return Agg{Func: FuncSum, Args: []Expr{e}} }

// metricCases cover every form of the metric language.
var metricCases = []struct {
	name string
	src  string
	want Select
}{
	{"sum of a fact by URI", "SELECT SUM([/svc/md/p1/obj/223])", Select{Expr: sum(uri("223"))}},
	{"functions are case-insensitive", "select avg({fact.x})", Select{Expr: Agg{Func: FuncAvg, Args: []Expr{ident("fact.x")}}}},
	{"min", "SELECT MIN({fact.x})", Select{Expr: Agg{Func: FuncMin, Args: []Expr{ident("fact.x")}}}},
	{"max", "SELECT MAX({fact.x})", Select{Expr: Agg{Func: FuncMax, Args: []Expr{ident("fact.x")}}}},
	{"median", "SELECT MEDIAN({fact.x})", Select{Expr: Agg{Func: FuncMedian, Args: []Expr{ident("fact.x")}}}},
	{"count", "SELECT COUNT({attr.devs.id})", Select{Expr: Agg{Func: FuncCount, Args: []Expr{ident("attr.devs.id")}}}},
	{"count along another dataset", "SELECT COUNT({attr.devs.id}, {attr.commits.id})",
		Select{Expr: Agg{Func: FuncCount, Args: []Expr{ident("attr.devs.id"), ident("attr.commits.id")}}}},
	{"sum of fact arithmetic", "SELECT SUM({fact.a} * {fact.b})",
		Select{Expr: sum(Binary{Op: "*", Left: ident("fact.a"), Right: ident("fact.b")})}},
	{"where equals a string", `SELECT AVG({fact.x}) WHERE {attr.status} = "Open"`, Select{
		Expr:  Agg{Func: FuncAvg, Args: []Expr{ident("fact.x")}},
		Where: Compare{Left: ident("attr.status"), Op: OpEq, Right: Text{Value: "Open"}}}},
	{"where in elements", "SELECT COUNT({attr.devs.id}) WHERE [/svc/md/p1/obj/123] IN ([/svc/md/p1/obj/123/elements?id=2015])", Select{
		Expr:  Agg{Func: FuncCount, Args: []Expr{ident("attr.devs.id")}},
		Where: In{Left: uri("123"), Values: []Value{ElementRef{Obj: uri("123"), ID: 2015}}}}},
	{"where not in strings", `SELECT SUM({f}) WHERE {a} NOT IN ("x", "y\"z", [/svc/md/p1/obj/9/elements?id=1])`, Select{
		Expr: sum(ident("f")),
		Where: In{Left: ident("a"), Not: true, Values: []Value{
			Text{Value: "x"}, Text{Value: `y"z`}, ElementRef{Obj: uri("9"), ID: 1}}}}},
	{"ratio of sub-selects", "SELECT (SELECT SUM({fact.a})) / (SELECT SUM({fact.b}))", Select{
		Expr: Binary{Op: "/", Left: Select{Expr: sum(ident("fact.a"))}, Right: Select{Expr: sum(ident("fact.b"))}}}},
	{"sub-select with its own filter", `SELECT SUM({f}) / (SELECT SUM({f}) BY ALL {attr.year} WHERE {a} <> "x")`, Select{
		Expr: Binary{Op: "/", Left: sum(ident("f")), Right: Select{
			Expr:  sum(ident("f")),
			Where: Compare{Left: ident("a"), Op: OpNe, Right: Text{Value: "x"}},
			By:    By{All: []Ref{ident("attr.year")}}}}}},
	{"by all", "SELECT SUM({fact.x}) BY ALL {attr.year}", Select{Expr: sum(ident("fact.x")), By: By{All: []Ref{ident("attr.year")}}}},
	{"by all in all other dimensions", "SELECT SUM({fact.x}) BY ALL IN ALL OTHER DIMENSIONS",
		Select{Expr: sum(ident("fact.x")), By: By{AllOther: true}}},
	{"by all other", "SELECT SUM({fact.x}) BY {attr.q}, ALL OTHER",
		Select{Expr: sum(ident("fact.x")), By: By{Attrs: []Ref{ident("attr.q")}, AllOther: true}}},
	{"by attributes", "SELECT SUM({fact.x}) BY {attr.a}, [/svc/md/p1/obj/7], ALL {attr.b}, ALL [/svc/md/p1/obj/8]", Select{
		Expr: sum(ident("fact.x")),
		By:   By{Attrs: []Ref{ident("attr.a"), uri("7")}, All: []Ref{ident("attr.b"), uri("8")}}}},
	{"by then where", `SELECT SUM({f}) BY {a} WHERE {b} = 3`, Select{
		Expr: sum(ident("f")), By: By{Attrs: []Ref{ident("a")}},
		Where: Compare{Left: ident("b"), Op: OpEq, Right: Number{Lit: "3"}}}},
	{"where then by", `SELECT SUM({f}) WHERE {b} = 3 BY {a}`, Select{
		Expr: sum(ident("f")), By: By{Attrs: []Ref{ident("a")}},
		Where: Compare{Left: ident("b"), Op: OpEq, Right: Number{Lit: "3"}}}},
	{"metric reuse", "SELECT [/svc/md/p1/obj/266] * 100", Select{
		Expr: Binary{Op: "*", Left: uri("266"), Right: Number{Lit: "100"}}}},
	{"precedence", "SELECT {a} + {b} * {c} - {d} / 2.5", Select{Expr: Binary{Op: "-",
		Left:  Binary{Op: "+", Left: ident("a"), Right: Binary{Op: "*", Left: ident("b"), Right: ident("c")}},
		Right: Binary{Op: "/", Left: ident("d"), Right: Number{Lit: "2.5"}}}}},
	{"parentheses", "SELECT ({a} + {b}) * ({c} - ({d}))", Select{Expr: Binary{Op: "*",
		Left:  Binary{Op: "+", Left: ident("a"), Right: ident("b")},
		Right: Binary{Op: "-", Left: ident("c"), Right: ident("d")}}}},
	{"left associative", "SELECT {a} - {b} - {c}", Select{Expr: Binary{Op: "-",
		Left: Binary{Op: "-", Left: ident("a"), Right: ident("b")}, Right: ident("c")}}},
	{"unary minus", "SELECT -SUM({f}) * --2", Select{Expr: Binary{Op: "*",
		Left: Unary{X: sum(ident("f"))}, Right: Unary{X: Unary{X: Number{Lit: "2"}}}}}},
	{"ifnull", "SELECT IFNULL(SUM({f}), 0) + IFNULL({m}, -1.5)", Select{Expr: Binary{Op: "+",
		Left:  Ifnull{Expr: sum(ident("f")), Default: Number{Lit: "0"}},
		Right: Ifnull{Expr: ident("m"), Default: Number{Lit: "-1.5"}}}}},
	{"comparisons", `SELECT SUM({f}) WHERE {a} < 1 AND {b} > -2 AND {c} <= 3.5 AND {d} >= 4 AND {e} <> [/svc/md/p1/obj/5/elements?id=6]`,
		Select{Expr: sum(ident("f")), Where: And{
			Left: And{
				Left: And{
					Left: And{
						Left:  Compare{Left: ident("a"), Op: OpLt, Right: Number{Lit: "1"}},
						Right: Compare{Left: ident("b"), Op: OpGt, Right: Number{Lit: "-2"}}},
					Right: Compare{Left: ident("c"), Op: OpLe, Right: Number{Lit: "3.5"}}},
				Right: Compare{Left: ident("d"), Op: OpGe, Right: Number{Lit: "4"}}},
			Right: Compare{Left: ident("e"), Op: OpNe, Right: ElementRef{Obj: uri("5"), ID: 6}}}}},
	{"and binds tighter than or", `SELECT SUM({f}) WHERE {a} = 1 OR {b} = 2 AND NOT {c} = 3`,
		Select{Expr: sum(ident("f")), Where: Or{
			Left: Compare{Left: ident("a"), Op: OpEq, Right: Number{Lit: "1"}},
			Right: And{
				Left:  Compare{Left: ident("b"), Op: OpEq, Right: Number{Lit: "2"}},
				Right: Not{Cond: Compare{Left: ident("c"), Op: OpEq, Right: Number{Lit: "3"}}}}}}},
	{"grouped conditions", `SELECT SUM({f}) where NOT ({a} = 1 or {b} = 2) and ({c} in ("x"))`,
		Select{Expr: sum(ident("f")), Where: And{
			Left: Not{Cond: Or{
				Left:  Compare{Left: ident("a"), Op: OpEq, Right: Number{Lit: "1"}},
				Right: Compare{Left: ident("b"), Op: OpEq, Right: Number{Lit: "2"}}}},
			Right: In{Left: ident("c"), Values: []Value{Text{Value: "x"}}}}}},
	{"select of a select", "SELECT (SELECT 1)", Select{Expr: Select{Expr: Number{Lit: "1"}}}},
}

func TestParseMetric(t *testing.T) {
	t.Parallel()
	for _, tc := range metricCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMetric(tc.src)
			if err != nil {
				t.Fatalf("ParseMetric(%q): %v", tc.src, err)
			}
			if !reflect.DeepEqual(m.Root, tc.want) {
				t.Fatalf("ParseMetric(%q)\n got %#v\nwant %#v", tc.src, m.Root, tc.want)
			}
		})
	}
}

func TestMetricRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range metricCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMetric(tc.src)
			if err != nil {
				t.Fatalf("ParseMetric: %v", err)
			}
			text := m.String()
			again, err := ParseMetric(text)
			if err != nil {
				t.Fatalf("ParseMetric(%q): %v", text, err)
			}
			if !reflect.DeepEqual(again, m) {
				t.Fatalf("round trip through %q\n got %#v\nwant %#v", text, again.Root, m.Root)
			}
			if again.String() != text {
				t.Fatalf("String() is not stable: %q then %q", text, again.String())
			}
		})
	}
}

func TestMetricString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"canonical spacing and case", "select sum( [/svc/md/p/obj/1] )where{a}=\"x\"", `SELECT SUM([/svc/md/p/obj/1]) WHERE {a} = "x"`},
		{"redundant parentheses dropped", "SELECT ((({a}) + ({b})))", "SELECT {a} + {b}"},
		{"needed parentheses kept", "SELECT {a} - ({b} - {c})", "SELECT {a} - ({b} - {c})"},
		{"division on the right", "SELECT {a} / ({b} * {c})", "SELECT {a} / ({b} * {c})"},
		{"product of sums", "SELECT ({a} + {b}) * {c}", "SELECT ({a} + {b}) * {c}"},
		{"negated sum", "SELECT -({a} + {b})", "SELECT -({a} + {b})"},
		{"double negation", "SELECT - - {a}", "SELECT - -{a}"},
		{"minus a negative", "SELECT {a} - -{b}", "SELECT {a} - -{b}"},
		{"or inside and", "SELECT {f} WHERE ({a} = 1 OR {b} = 2) AND {c} = 3", "SELECT {f} WHERE ({a} = 1 OR {b} = 2) AND {c} = 3"},
		{"and on the right of and", "SELECT {f} WHERE {a} = 1 AND ({b} = 2 AND {c} = 3)", "SELECT {f} WHERE {a} = 1 AND ({b} = 2 AND {c} = 3)"},
		{"not of and", "SELECT {f} WHERE NOT ({a} = 1 AND {b} = 2)", "SELECT {f} WHERE NOT ({a} = 1 AND {b} = 2)"},
		{"by in canonical order", "SELECT {f} BY ALL OTHER DIMENSIONS, ALL {y}, {q}", "SELECT {f} BY {q}, ALL {y}, ALL IN ALL OTHER DIMENSIONS"},
		{"string escapes", `SELECT {f} WHERE {a} IN ("q\"\\", "")`, `SELECT {f} WHERE {a} IN ("q\"\\", "")`},
		{"element id normalised", "SELECT {f} WHERE {a} = [/o/1/elements?id=007]", "SELECT {f} WHERE {a} = [/o/1/elements?id=7]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMetric(tc.src)
			if err != nil {
				t.Fatalf("ParseMetric(%q): %v", tc.src, err)
			}
			if got := m.String(); got != tc.want {
				t.Fatalf("String() = %s\nwant       %s", got, tc.want)
			}
		})
	}
}

func TestParseMetricErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		col   int
		token string
		msg   string
	}{
		{"no select", "SUM({f})", 1, "SUM", `unexpected "SUM", expected SELECT`},
		{"empty", "", 1, "", `unexpected end of input, expected SELECT`},
		{"nothing selected", "SELECT", 7, "", `unexpected end of input, expected a number, a reference, a function or (`},
		{"unknown function", "SELECT TOTAL({f})", 8, "TOTAL", `unexpected "TOTAL", expected a number, a reference, a function or (`},
		{"two arguments to sum", "SELECT SUM({a}, {b})", 15, ",", `unexpected ",", expected ")"`},
		{"three arguments to count", "SELECT COUNT({a}, {b}, {c})", 22, ",", `unexpected ",", expected ")"`},
		{"unclosed call", "SELECT SUM({a}", 15, "", `unexpected end of input, expected ")"`},
		{"trailing token", "SELECT SUM({a}) {b}", 17, "{b}", `unexpected "{b}", expected end of input`},
		{"where twice", `SELECT {a} WHERE {b} = 1 WHERE {c} = 2`, 26, "WHERE", `unexpected "WHERE", expected end of input`},
		{"element in an expression", "SELECT SUM([/o/1/elements?id=2])", 12, "[/o/1/elements?id=2]",
			`unexpected "[/o/1/elements?id=2]", expected an object [URI] or {identifier}`},
		{"element on the left", "SELECT {f} WHERE [/o/1/elements?id=2] = 1", 18, "[/o/1/elements?id=2]",
			`unexpected "[/o/1/elements?id=2]", expected an object [URI] or {identifier}`},
		{"object on the right", "SELECT {f} WHERE {a} = [/o/1]", 24, "[/o/1]",
			`unexpected "[/o/1]", expected a string, a number or an element [URI/elements?id=N]`},
		{"malformed element", "SELECT {f} WHERE {a} = [/o/1/elements?id=x]", 24, "[/o/1/elements?id=x]",
			`unexpected "[/o/1/elements?id=x]", expected a string, a number or an element [URI/elements?id=N]`},
		{"missing operator", `SELECT {f} WHERE {a} "x"`, 22, `"x"`,
			`unexpected string "x", expected =, <>, <, >, <=, >=, IN or NOT IN`},
		{"not without in", `SELECT {f} WHERE {a} NOT ("x")`, 26, "(", `unexpected "(", expected IN`},
		{"empty in list", `SELECT {f} WHERE {a} IN ()`, 26, ")",
			`unexpected ")", expected a string, a number or an element [URI/elements?id=N]`},
		{"condition expected", `SELECT {f} WHERE 1 = 1`, 18, "1", `unexpected "1", expected a condition`},
		{"ifnull needs a number", `SELECT IFNULL({a}, {b})`, 20, "{b}", `unexpected "{b}", expected a number`},
		{"by all what", `SELECT {f} BY ALL "x"`, 19, `"x"`,
			`unexpected string "x", expected IN ALL OTHER DIMENSIONS, OTHER or an attribute`},
		{"by all in", `SELECT {f} BY ALL IN OTHER`, 22, "OTHER", `unexpected "OTHER", expected ALL`},
		{"letters after a number", "SELECT 1e3", 9, "e3", `unexpected "e3", expected end of input`},
		{"comments are not metric syntax", "SELECT {a} -- note", 15, "note",
			`unexpected "note", expected a number, a reference, a function or (`},
		{"uri must be absolute", "SELECT [svc/md]", 8, "[svc/md]", `URI must start with /`},
		{"uri with a space", "SELECT [/svc md]", 8, "[/svc ", `invalid character ' ' in URI`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMetric(tc.src)
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("ParseMetric(%q) = %v, %v; want *Error", tc.src, m, err)
			}
			want := Error{Line: 1, Col: tc.col, Token: tc.token, Msg: tc.msg}
			if *perr != want {
				t.Fatalf("error = %#v\nwant    %#v", *perr, want)
			}
			if m != nil {
				t.Fatalf("metric = %v, want nil", m)
			}
		})
	}
}

func TestParseMetricLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		msg  string
	}{
		{"deep parentheses", "SELECT " + repeat("(", 500) + "1" + repeat(")", 500), "nesting deeper than 200 levels"},
		{"deep negation", "SELECT " + repeat("-", 500) + "1", "nesting deeper than 200 levels"},
		{"deep not", "SELECT {f} WHERE " + repeat("NOT ", 500) + "{a} = 1", "nesting deeper than 200 levels"},
		{"huge number", "SELECT 1" + repeat("0", 400), `unexpected "1` + repeat("0", 39) + `...", expected a number in range`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMetric(tc.src)
			var perr *Error
			if !errors.As(err, &perr) || perr.Msg != tc.msg {
				t.Fatalf("error = %v, want message %q", err, tc.msg)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}

func TestNumberFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit  string
		want float64
	}{{"0", 0}, {"100", 100}, {"2.5", 2.5}, {"-1.25", -1.25}, {"007", 7}}
	for _, tc := range tests {
		if got := (Number{Lit: tc.lit}).Float(); got != tc.want {
			t.Errorf("Number{%q}.Float() = %v, want %v", tc.lit, got, tc.want)
		}
	}
}
