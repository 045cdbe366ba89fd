package jexl

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// bracketed formats a metric so that tests can tell format was used.
func bracketed(uri string, v float64) string { return fmt.Sprintf("[%s=%g]", uri, v) }

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     string
		values  map[string]float64
		format  func(string, float64) string
		want    string
		metrics []string
	}{
		{
			name:    "reference message",
			src:     "Revenue fell to ${f:executeMetric('/svc/md/p1/obj/12')}",
			values:  map[string]float64{revenue: 15.5},
			format:  bracketed,
			want:    "Revenue fell to [/svc/md/p1/obj/12=15.5]",
			metrics: []string{revenue},
		},
		{
			name:    "single metric without format",
			src:     "${f:executeMetric('a')} and ${ ( f:executeMetric('a') ) }",
			values:  map[string]float64{"a": 1234.5},
			want:    "1234.5 and 1234.5",
			metrics: []string{"a"},
		},
		{
			name:    "parenthesised metric call is still one call",
			src:     "${(f:executeMetric('a'))}",
			values:  map[string]float64{"a": 2},
			format:  bracketed,
			want:    "[a=2]",
			metrics: []string{"a"},
		},
		{
			name:    "computed values are formatted plainly",
			src:     "${f:executeMetric('a') * 2}|${f:executeMetric('a') / 3}|${f:executeMetric('a') > 1}",
			values:  map[string]float64{"a": 1},
			format:  bracketed,
			want:    "2|0.333333|false",
			metrics: []string{"a"},
		},
		{
			name:    "metrics in order of first appearance",
			src:     "${f:executeMetric('b')} ${f:executeMetric('a') + f:executeMetric('b')} ${f:executeMetric('c')}",
			values:  map[string]float64{"a": 1, "b": 2, "c": 3},
			want:    "2 3 3",
			metrics: []string{"b", "a", "c"},
		},
		{
			name:    "closing brace inside a string literal",
			src:     "x ${f:executeMetric('/a}b')} y",
			values:  map[string]float64{"/a}b": 7},
			want:    "x 7 y",
			metrics: []string{"/a}b"},
		},
		{
			name:    "escaped quote inside a string literal",
			src:     `${f:executeMetric('it\'s }')}`,
			values:  map[string]float64{"it's }": 1},
			want:    "1",
			metrics: []string{"it's }"},
		},
		{
			name: "string and bool parts",
			src:  `${'a}b'}${"c"}${true}`,
			want: "a}bctrue",
		},
		{
			name: "escaped expression",
			src:  `cost \${f:executeMetric('a')} is ${1}`,
			want: "cost ${f:executeMetric('a')} is 1",
		},
		{
			name: "other dollars and braces are text",
			src:  `$5 {x} } $ \n \$ ${2}$`,
			want: `$5 {x} } $ \n \$ 2$`,
		},
		{
			name: "no expressions",
			src:  "plain text",
			want: "plain text",
		},
		{
			name: "empty template",
			src:  "",
			want: "",
		},
		{
			name:    "words in the text are not touched",
			src:     "a eq b and not ${f:executeMetric('x eq y')}",
			values:  map[string]float64{"x eq y": 3},
			want:    "a eq b and not 3",
			metrics: []string{"x eq y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.src)
			if err != nil {
				t.Fatalf("ParseTemplate(%q): %v", tt.src, err)
			}
			if got := tpl.Metrics(); !reflect.DeepEqual(got, tt.metrics) {
				t.Errorf("Metrics() = %q, want %q", got, tt.metrics)
			}
			got, err := tpl.Render(tt.values, tt.format)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseTemplateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		pos  int
		msg  string
	}{
		{"unterminated", "Revenue ${f:executeMetric('a')", 8, `"${" is not closed`},
		{"brace in unclosed string", "x ${f:executeMetric('a})", 2, `"${" is not closed`},
		{"empty", "a ${ } b", 2, "empty expression"},
		{"error offset is in the template", "Revenue ${f:executeMetric(x)}", 26, "in quotes"},
		{"second part", "${1} and ${foo}", 11, `unknown word "foo"`},
		{"type error offset", "ab${1 + 'x'}", 6, "mismatched types"},
		{"nested braces are rejected by the language", "${ {1} }", 3, "{...}"},
		{"invalid utf-8", "ab\xff${1}", 2, "UTF-8"},
		{"too long", strings.Repeat("x", MaxTemplateLen+1), -1, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTemplate(tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseTemplate error = %v, want *Error", err)
			}
			if e.Pos != tt.pos || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error = {%d %q}, want position %d and a message containing %q", e.Pos, e.Msg, tt.pos, tt.msg)
			}
		})
	}
}

func TestRenderMissingMetric(t *testing.T) {
	t.Parallel()
	tpl, err := ParseTemplate("Revenue ${f:executeMetric('a')} and ${f:executeMetric('b')}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(map[string]float64{"a": 1}, nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Render error = %v, want *Error", err)
	}
	if e.Pos != 38 || !strings.Contains(e.Msg, `"b"`) {
		t.Errorf("error = {%d %q}, want position 38 and the URI", e.Pos, e.Msg)
	}
}

func TestFormatNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"integer", 16, "16"},
		{"negative integer", -3, "-3"},
		{"large integer", 1e15, "1000000000000000"},
		{"fraction", 2.5, "2.5"},
		{"six decimals", 1.0 / 3, "0.333333"},
		{"rounded", 2.0000005, "2.000001"},
		{"rounds to integer", 1.9999999, "2"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"tiny negative", -1e-9, "0"},
		{"infinity", math.Inf(1), "Infinity"},
		{"negative infinity", math.Inf(-1), "-Infinity"},
		{"nan", math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatNumber(tt.in); got != tt.want {
				t.Errorf("formatNumber(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRenderHTML: the template's own text is HTML and stays; what its
// expressions write is escaped, so no metric value or string can add markup.
func TestRenderHTML(t *testing.T) {
	t.Parallel()
	const uri = "/svc/md/p1/obj/7"
	tpl, err := ParseTemplate(`<p>Revenue <b>${f:executeMetric('` + uri + `')}</b>: ${'<script>x</script>'} ${1 < 2}</p>`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.RenderHTML(map[string]float64{uri: 1234.5}, func(_ string, v float64) string { return "<€1,234.50>" })
	if err != nil {
		t.Fatal(err)
	}
	want := `<p>Revenue <b>&lt;€1,234.50&gt;</b>: &lt;script&gt;x&lt;/script&gt; true</p>`
	if got != want {
		t.Errorf("RenderHTML = %s, want %s", got, want)
	}
}
