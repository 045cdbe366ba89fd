package jexl

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser/lexer"
)

var exprSeeds = []string{
	"f:executeMetric('/svc/md/p1/obj/12') < 16",
	"f:previous('/svc/md/p1/obj/12') != null and f:executeMetric('/svc/md/p1/obj/12') <= 0.9 * f:previous('/svc/md/p1/obj/12')",
	"f:previous('a') == null",
	`"true"`,
	"true",
	"f:executeMetric('a eq b and not c') gt 0",
	`f:executeMetric("x") ge 1.5 or not (2 ne 3) && !false || 1 le 2`,
	"max(abs(-1), min(2, f:executeMetric('a')), round(1.5), floor(1.5), ceil(1.5)) mod 2 div 1",
	`'it\'s' + "a ${b}" == 'x'`,
	"f:executeMetric(x)",
	"f:executeMetric('a').b[0] | c ?? d .. e ? f : g; let h = 1",
	"{1: 2}",
	"1e400 + 0x10 + 1_0",
	"// comment\n1 /* c */ < 2",
	"'ž' == ž",
	"b'x' + `y`",
}

// checkError fails unless err is an *Error with a position inside src or -1.
func checkError(t *testing.T, src string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: error %v is %T, want *Error", src, err, err)
	}
	if e.Pos < -1 || e.Pos > len(src) || e.Msg == "" {
		t.Fatalf("%q: error {%d %q} has no message or a position outside the source", src, e.Pos, e.Msg)
	}
}

// checkMetrics fails unless every URI is non-empty and, when the source has no escapes that
// could change it, appears in the source as written.
func checkMetrics(t *testing.T, src string, metrics []string) {
	t.Helper()
	for _, uri := range metrics {
		if uri == "" {
			t.Fatalf("%q: empty metric URI", src)
		}
		if !strings.Contains(src, `\`) && !strings.Contains(src, "\r") && !strings.Contains(src, uri) {
			t.Fatalf("%q: metric %q does not appear in the source", src, uri)
		}
	}
}

func valuesFor(metrics []string) map[string]float64 {
	values := make(map[string]float64, len(metrics))
	for i, uri := range metrics {
		values[uri] = float64(i) + 0.5
	}
	return values
}

// withPrevious adds to values a previous value of each of prevs.
func withPrevious(values map[string]float64, prevs []string) map[string]float64 {
	for i, uri := range prevs {
		values[PreviousKey(uri)] = float64(i) + 1.5
	}
	return values
}

// stringValues lexes src and returns the values of its string literals, split into the
// arguments of f:executeMetric calls, those of f:previous calls and all others.
func stringValues(t *testing.T, src string) (metricArgs, prevArgs, others []string) {
	t.Helper()
	toks, err := lexer.Lex(file.NewSource(src))
	if err != nil {
		t.Fatalf("lex %q: %v", src, err)
	}
	for k, tok := range toks {
		if tok.Kind != lexer.String {
			continue
		}
		call := k >= 4 && toks[k-1].Is(lexer.Bracket, "(") && toks[k-3].Is(lexer.Operator, ":") && toks[k-4].Is(lexer.Identifier, "f")
		switch {
		case call && toks[k-2].Is(lexer.Identifier, "executeMetric"):
			metricArgs = append(metricArgs, tok.Value)
		case call && toks[k-2].Is(lexer.Identifier, "previous"):
			prevArgs = append(prevArgs, tok.Value)
		default:
			others = append(others, tok.Value)
		}
	}
	return metricArgs, prevArgs, others
}

// checkStringsSurvive fails unless translation kept every string literal's value: metric URIs
// go to the metric list, every other literal reaches expr unchanged and in order.
func checkStringsSurvive(t *testing.T, src string, tr *translation) {
	t.Helper()
	args, prevs, others := stringValues(t, src)
	_, _, translated := stringValues(t, tr.source)
	if !reflect.DeepEqual(others, translated) {
		t.Fatalf("%q: string literals %q became %q", src, others, translated)
	}
	if d := distinct(args); !reflect.DeepEqual(d, tr.metrics) {
		t.Fatalf("%q: metric arguments %q, metrics %q", src, d, tr.metrics)
	}
	if d := distinct(prevs); !reflect.DeepEqual(d, tr.prevs) {
		t.Fatalf("%q: f:previous arguments %q, previous metrics %q", src, d, tr.prevs)
	}
}

// distinct returns list without repeats, in order of first appearance.
func distinct(list []string) []string {
	var out []string
	for _, a := range list {
		if !contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func FuzzCompile(f *testing.F) {
	for _, s := range exprSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if tr, err := translate(src); err == nil {
			checkStringsSurvive(t, src, tr)
		}

		p, err := CompileValue(src)
		if err != nil {
			checkError(t, src, err)
		} else {
			checkMetrics(t, src, p.Metrics())
			if _, err := p.Eval(withPrevious(valuesFor(p.Metrics()), p.Previous())); err != nil {
				t.Fatalf("%q: Eval: %v", src, err)
			}
			if _, err := p.Eval(valuesFor(p.Metrics())); err != nil && !errors.Is(err, ErrNoPrevious) {
				t.Fatalf("%q: Eval without previous values: %v", src, err)
			}
			if len(p.Metrics()) > 0 {
				if _, err := p.Eval(nil); err == nil {
					t.Fatalf("%q: Eval without values succeeded", src)
				}
			}
		}

		c, err := CompileCondition(src)
		if err != nil {
			checkError(t, src, err)
			return
		}
		checkMetrics(t, src, c.Metrics())
		if _, err := c.EvalBool(withPrevious(valuesFor(c.Metrics()), c.Previous())); err != nil {
			t.Fatalf("%q: EvalBool: %v", src, err)
		}
	})
}

func FuzzTemplate(f *testing.F) {
	f.Add("Revenue fell to ${f:executeMetric('/svc/md/p1/obj/12')}")
	f.Add("was ${f:previous('/svc/md/p1/obj/12')}, ${round((f:executeMetric('m') - f:previous('m')) * 100 / f:previous('m'))}%")
	f.Add("x ${f:executeMetric('/a}b')} y ${'{'} \\${z}")
	f.Add("${")
	f.Add("${}${ }")
	f.Add("${1 + 2} ${'a' + \"b\"} ${1 < 2} ${max(f:executeMetric('a'), 3) / 7}")
	f.Add("${ {a: 1} } ${f:executeMetric(\"it\\\"s\")}")
	for _, s := range exprSeeds {
		f.Add("${" + s + "}")
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := ParseTemplate(src)
		if err != nil {
			checkError(t, src, err)
			return
		}
		checkMetrics(t, src, tpl.Metrics())
		calls := 0
		format := func(uri string, v float64) string {
			calls++
			if !contains(tpl.Metrics(), uri) {
				t.Fatalf("%q: format called with unknown metric %q", src, uri)
			}
			return ""
		}
		out, err := tpl.Render(valuesFor(tpl.Metrics()), format)
		if err != nil {
			t.Fatalf("%q: Render: %v", src, err)
		}
		if !strings.Contains(src, "${") && out != src {
			t.Fatalf("%q: text without expressions rendered as %q", src, out)
		}
		if calls > strings.Count(src, "executeMetric") {
			t.Fatalf("%q: format called %d times", src, calls)
		}
	})
}
