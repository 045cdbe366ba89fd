package jexl

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestTranslate(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    string
		metrics []string
	}{
		{
			name:    "reference condition",
			src:     "f:executeMetric('/svc/md/p1/obj/12') < 16",
			want:    "m0 < 16.0",
			metrics: []string{"/svc/md/p1/obj/12"},
		},
		{
			name:    "double quoted uri",
			src:     `f:executeMetric("/svc/md/p1/obj/12") >= 1.5`,
			want:    "m0 >= 1.5",
			metrics: []string{"/svc/md/p1/obj/12"},
		},
		{
			name:    "spaces around namespace",
			src:     "f : executeMetric ( 'a' )",
			want:    "m0",
			metrics: []string{"a"},
		},
		{
			name:    "repeated metric shares a variable",
			src:     "f:executeMetric('a') > f:executeMetric('b') || f:executeMetric('a') == 1",
			want:    "m0 > m1 || m0 == 1.0",
			metrics: []string{"a", "b"},
		},
		{
			name: "word comparisons",
			src:  "1 eq 1 and 1 ne 2 and 1 lt 2 and 1 le 1 and 2 gt 1 and 2 ge 2",
			want: "1.0 == 1.0 && 1.0 != 2.0 && 1.0 < 2.0 && 1.0 <= 1.0 && 2.0 > 1.0 && 2.0 >= 2.0",
		},
		{
			name: "word boolean operators",
			src:  "not true or false",
			want: "! true || false",
		},
		{
			name: "symbol operators unchanged",
			src:  "!(1 != 2) && true || false",
			want: "! ( 1.0 != 2.0 ) && true || false",
		},
		{
			name: "div and mod",
			src:  "7 div 2 + 7 mod 2",
			want: "7.0 / 2.0 + 7.0 % 2.0",
		},
		{
			name: "arithmetic",
			src:  "-1 + 2 * 3 / 4 % 5",
			want: "- 1.0 + 2.0 * 3.0 / 4.0 % 5.0",
		},
		{
			name: "numbers become floats",
			src:  "16 + 2.50 + 1e6 + .5 + 1e-7 + 1e21",
			want: "16.0 + 2.5 + 1e+06 + 0.5 + 1e-07 + 1e+21",
		},
		{
			name: "functions",
			src:  "max(abs(-1), min(2, 3), round(1.5), floor(1.5), ceil(1.5))",
			want: "max ( abs ( - 1.0 ) , min ( 2.0 , 3.0 ) , round ( 1.5 ) , floor ( 1.5 ) , ceil ( 1.5 ) )",
		},
		{
			name:    "words inside a uri stay",
			src:     "f:executeMetric('a eq b and not c') gt 0",
			want:    "m0 > 0.0",
			metrics: []string{"a eq b and not c"},
		},
		{
			name: "string literals copied verbatim",
			src:  `'x eq y' == "it's ${f:executeMetric('z')}"`,
			want: `'x eq y' == "it's ${f:executeMetric('z')}"`,
		},
		{
			name:    "escaped quote in uri",
			src:     `f:executeMetric('it\'s')`,
			want:    "m0",
			metrics: []string{"it's"},
		},
		{
			name: "comments are dropped",
			src:  "1 < 2 // one\n/* two */",
			want: "1.0 < 2.0",
		},
		{
			name:    "unicode before a call",
			src:     "'žluťoučký' == 'x' or f:executeMetric('/ü') > 0",
			want:    "'žluťoučký' == 'x' || m0 > 0.0",
			metrics: []string{"/ü"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := translate(tt.src)
			if err != nil {
				t.Fatalf("translate(%q): %v", tt.src, err)
			}
			if tr.source != tt.want {
				t.Errorf("translate(%q) = %q, want %q", tt.src, tr.source, tt.want)
			}
			if !reflect.DeepEqual(tr.metrics, tt.metrics) {
				t.Errorf("metrics = %q, want %q", tr.metrics, tt.metrics)
			}
		})
	}
}

func TestTranslateRejects(t *testing.T) {
	tests := []struct {
		name string
		src  string
		pos  int
		msg  string // a part of the message
	}{
		{"unknown word", "1 < foo", 4, `unknown word "foo"`},
		{"nil is expr's, not ours", "f:executeMetric('a') == nil", 24, `unknown word "nil"`},
		{"metric arg not quoted", "f:executeMetric(x)", 16, "f:executeMetric takes a metric URI in quotes"},
		{"metric arg number", "f:executeMetric(12)", 16, "f:executeMetric takes a metric URI in quotes"},
		{"metric arg raw string", "f:executeMetric(`a`)", 16, "single or double quotes"},
		{"metric two args", "f:executeMetric('a', 'b')", 19, "takes one metric URI"},
		{"metric empty uri", "f:executeMetric('')", 16, "not an empty string"},
		{"metric not called", "f:executeMetric + 1", 16, "is a function"},
		{"metric at end", "f:executeMetric", 15, "is a function"},
		{"other namespace function", "f:exec('a')", 2, "unknown function f:exec"},
		{"namespace without name", "f:", 2, "expected a function name after f:"},
		{"missing namespace", "executeMetric('a')", 0, "f:executeMetric('<metric uri>')"},
		{"other namespace", "g:executeMetric('a')", 0, `unknown word "g"`},
		{"member access", "f:executeMetric('a').value", 20, `"."`},
		{"optional chaining", "f:executeMetric('a')?.b", 20, `"?."`},
		{"indexing", "f:executeMetric('a')[0]", 20, "[...]"},
		{"closure", "{1}", 0, "{...}"},
		{"pipe", "1 | abs()", 2, "pipe"},
		{"nil coalescing", "1 ?? 2", 2, `"??"`},
		{"range", "1..3", 1, `".."`},
		{"ternary", "true ? 1 : 2", 5, "conditional"},
		{"let", "let x = 1; x", 0, "let"},
		{"assignment", "1 = 1", 2, "assignment"},
		{"sequence", "1; 2", 1, `";"`},
		{"in operator", "1 in 2", 2, `"in"`},
		{"not in", "1 not in 2", 6, `"in"`},
		{"matches", "'a' matches 'b'", 4, `"matches"`},
		{"power", "2 ** 3", 2, `"**"`},
		{"caret", "2 ^ 3", 2, `"^"`},
		{"bitwise and", "1 & 2", 2, `"&"`},
		{"pointer", "#", 0, `"#"`},
		{"builtin not allowed", "len('a')", 0, `unknown word "len"`},
		{"env access", "$env", 0, `unknown word "$env"`},
		{"generated name", "m0 + 1", 0, `unknown word "m0"`},
		{"function not called", "abs", 0, "abs is a function"},
		{"hex number", "0x10", 0, "decimal"},
		{"underscore number", "1_000", 0, "decimal"},
		{"huge number", "1e999", 0, "too large"},
		{"byte string", "b'a'", 0, "byte strings"},
		{"backtick string", "`a`", 0, "single or double quotes"},
		{"unclosed string", "'abc", 4, "string is not closed"},
		{"bad character", "1 @ 2", 2, "unrecognized character"},
		{"empty", "  ", 0, "expression is empty"},
		{"offsets count bytes", "'ž' == ž", 8, `unknown word "ž"`},
		{"invalid utf-8", "f:executeMetric('a\x84')", 18, "UTF-8"},
		{"too long", "1" + strings.Repeat(" ", MaxLen), -1, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := translate(tt.src)
			if err == nil {
				t.Fatalf("translate(%q) = %q, want an error", tt.src, tr.source)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if e.Pos != tt.pos || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error = {%d %q}, want position %d and a message containing %q", e.Pos, e.Msg, tt.pos, tt.msg)
			}
		})
	}
}
