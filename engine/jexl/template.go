package jexl

import (
	"errors"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// MaxTemplateLen is the longest template, in bytes, that ParseTemplate accepts.
const MaxTemplateLen = 64 << 10

// Template is a message text with ${...} expressions. It is immutable and safe for concurrent
// use.
type Template struct {
	parts   []part
	metrics []string
	prevs   []string // metrics read with f:previous
	names   []string // the text variables its expressions may read
}

// part is literal text from byte offset pos of the source or, when prog is
// set, an expression starting at byte offset pos.
type part struct {
	text string
	prog *Program
	pos  int
}

// ParseTemplate parses text with embedded ${expression} parts and compiles each expression
// with CompileValue.
//
// An expression ends at the first "}" outside its string literals, so a "}" inside quotes
// belongs to the expression. A backslash before "${" makes it literal text: `\${x}` renders
// as `${x}`. Any other backslash, "$" or "}" is plain text.
func ParseTemplate(src string) (*Template, error) { return parseTemplate(src, nil) }

// ParseTemplateVars is ParseTemplate for a template whose expressions may
// also read the text variables names, such as "subject" or
// "subscription.title" (see RenderJSON).
func ParseTemplateVars(src string, names []string) (*Template, error) {
	return parseTemplate(src, names)
}

func parseTemplate(src string, names []string) (*Template, error) {
	if len(src) > MaxTemplateLen {
		return nil, &Error{Pos: -1, Msg: fmt.Sprintf("template is longer than %d bytes", MaxTemplateLen)}
	}
	if err := checkUTF8(src); err != nil {
		return nil, err
	}
	t := &Template{names: names}
	var text strings.Builder
	start := 0 // of the literal text in text
	for i := 0; i < len(src); {
		if text.Len() == 0 {
			start = i
		}
		switch {
		case strings.HasPrefix(src[i:], `\${`):
			text.WriteString("${")
			i += 3
		case strings.HasPrefix(src[i:], "${"):
			end, err := exprEnd(src, i)
			if err != nil {
				return nil, err
			}
			if text.Len() > 0 {
				t.parts = append(t.parts, part{text: text.String(), pos: start})
				text.Reset()
			}
			if err := t.addExpr(src[i+2:end], i+2); err != nil {
				return nil, err
			}
			i = end + 1
		default:
			text.WriteByte(src[i])
			i++
		}
	}
	if text.Len() > 0 {
		t.parts = append(t.parts, part{text: text.String(), pos: start})
	}
	return t, nil
}

// exprEnd returns the offset of the "}" closing the "${" at start, skipping string literals
// and balanced braces.
func exprEnd(src string, start int) (int, error) {
	depth := 0
	var quote byte
	for j := start + 2; j < len(src); j++ {
		c := src[j]
		switch {
		case quote != 0:
			if c == '\\' {
				j++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return j, nil
			}
			depth--
		}
	}
	return 0, &Error{Pos: start, Msg: `"${" is not closed with "}"`}
}

func (t *Template) addExpr(src string, pos int) error {
	if strings.TrimSpace(src) == "" {
		return &Error{Pos: pos - 2, Msg: `empty expression "${}"`}
	}
	prog, err := CompileValueVars(src, t.names)
	if err != nil {
		return shift(err, pos)
	}
	t.parts = append(t.parts, part{prog: prog, pos: pos})
	for _, m := range prog.tr.metrics {
		if !contains(t.metrics, m) {
			t.metrics = append(t.metrics, m)
		}
	}
	for _, m := range prog.tr.prevs {
		if !contains(t.prevs, m) {
			t.prevs = append(t.prevs, m)
		}
	}
	return nil
}

// Previous returns the distinct metric URIs the template reads with
// f:previous, in order of first appearance.
func (t *Template) Previous() []string {
	return append([]string(nil), t.prevs...)
}

// NoValue is what a text template writes for a null: a previous value
// there is none of, or an expression that needs one.
const NoValue = "(no value)"

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Metrics returns the distinct metric URIs the template reads, in order of first appearance.
func (t *Template) Metrics() []string {
	return append([]string(nil), t.metrics...)
}

// Render evaluates the expressions with values and returns the text. An expression that is
// exactly one f:executeMetric call is written as format(uri, value), so the caller can apply
// the metric's number format; a nil format formats it like any other number. Other numbers are
// written plainly (integers without decimals, others with at most six decimals), strings as
// they are and booleans as true or false.
func (t *Template) Render(values map[string]float64, format func(uri string, v float64) string) (string, error) {
	return t.render(values, format, func(s string) string { return s })
}

// RenderHTML is Render for a template whose text is HTML: the text is
// written as it is, and what each expression writes is escaped.
func (t *Template) RenderHTML(values map[string]float64, format func(uri string, v float64) string) (string, error) {
	return t.render(values, format, html.EscapeString)
}

func (t *Template) render(values map[string]float64, format func(uri string, v float64) string, esc func(string) string) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.prog == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := p.prog.EvalVars(values, nil)
		if errors.Is(err, ErrNoPrevious) || (err == nil && v == nil) {
			b.WriteString(esc(NoValue))
			continue
		}
		if err != nil {
			return "", shift(err, p.pos)
		}
		if uri, ok := p.prog.singleMetric(); ok && format != nil {
			if f, ok := v.(float64); ok {
				b.WriteString(esc(format(uri, f)))
				continue
			}
		}
		b.WriteString(esc(formatValue(v)))
	}
	return b.String(), nil
}

// formatValue writes an expression result as message text.
func formatValue(v any) string {
	switch v := v.(type) {
	case float64:
		return formatNumber(v)
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	default:
		return fmt.Sprint(v)
	}
}

// formatNumber writes integers without decimals and other numbers rounded to six decimals with
// trailing zeros trimmed. Infinities and NaN are written as JEXL (Java) writes them.
func formatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}
