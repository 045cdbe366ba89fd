package jexl

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// RenderJSON renders a template whose text is JSON, such as a webhook's
// body, and checks that the result is JSON. What each expression writes is
// a JSON value where a value stands, a number as a plain JSON number (not
// in its metric's format; null when the metric has no value, which values
// holds as NaN), a string in quotes with its quotes, backslashes and
// control characters escaped, true or false; inside a string of the
// template's text it is the string's content, escaped alike, and a number
// without a value is written null. vars holds the text variables the
// template was parsed with (ParseTemplateVars).
//
// A result that is not JSON is an *Error at the place of the template that
// made it: the expression that wrote it or the template's own text.
func (t *Template) RenderJSON(values map[string]float64, vars map[string]string) ([]byte, error) {
	var b bytes.Buffer
	var js jsonState
	spans := make([]outSpan, 0, len(t.parts))
	for _, p := range t.parts {
		spans = append(spans, outSpan{out: b.Len(), part: p})
		if p.prog == nil {
			b.WriteString(p.text)
			js.scan(p.text)
			continue
		}
		v, err := p.prog.EvalVars(values, vars)
		if errors.Is(err, ErrNoPrevious) {
			v, err = nil, nil // written null
		}
		if err != nil {
			return nil, shift(err, p.pos)
		}
		if js.inString {
			writeJSONContent(&b, v)
		} else {
			writeJSONValue(&b, v)
		}
	}
	out := b.Bytes()
	if json.Valid(out) {
		return out, nil
	}
	return nil, t.notJSON(out, spans)
}

// jsonState follows a JSON text far enough to know whether it is inside a
// string.
type jsonState struct {
	inString bool
	escaped  bool // the last byte was the backslash of an escape
}

func (s *jsonState) scan(text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case s.escaped:
			s.escaped = false
		case s.inString && c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = !s.inString
		}
	}
}

// writeJSONValue writes v as a JSON value.
func writeJSONValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case float64:
		b.WriteString(jsonNumber(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		b.WriteByte('"')
		writeJSONContent(b, v)
		b.WriteByte('"')
	default:
		b.WriteString("null")
	}
}

// writeJSONContent writes v as the content of a JSON string.
func writeJSONContent(b *bytes.Buffer, v any) {
	var s string
	switch v := v.(type) {
	case float64:
		s = jsonNumber(v)
	case bool:
		s = strconv.FormatBool(v)
	case string:
		s = v
	default:
		s = "null"
	}
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(strings.ToValidUTF8(s, "\uFFFD"))
	b.Write(bytes.TrimSuffix(bytes.TrimSuffix(q.Bytes()[1:], []byte("\n")), []byte(`"`)))
}

// jsonNumber writes f as a JSON number: plainly, without exponent from a
// millionth to 10^21; null for NaN and the infinities, which JSON lacks.
func jsonNumber(f float64) string {
	switch a := math.Abs(f); {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "null"
	case f == 0:
		return "0"
	case a < 1e21 && a >= 1e-6:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// outSpan is where a part of the template begins in the output.
type outSpan struct {
	out  int
	part part
}

// notJSON is the error of an output that is not JSON, at the place of the
// template that wrote the byte where the JSON broke.
func (t *Template) notJSON(out []byte, spans []outSpan) error {
	var v any
	err := json.Unmarshal(out, &v)
	at, msg := len(out), "the result is not JSON"
	var se *json.SyntaxError
	if errors.As(err, &se) {
		at, msg = int(se.Offset)-1, msg+": "+se.Error()
	} else if err != nil {
		msg += ": " + err.Error()
	}
	at = max(min(at, len(out)-1), 0)
	pos := -1
	for i := len(spans) - 1; i >= 0; i-- {
		if sp := spans[i]; sp.out <= at {
			pos = sp.part.pos
			if sp.part.prog == nil {
				pos = sourceOffset(sp.part, at-sp.out)
			} else {
				pos -= 2 // the "${"
			}
			break
		}
	}
	return &Error{Pos: pos, Msg: msg}
}

// sourceOffset maps byte n of a literal part's text back to its source,
// where "${" was written `\${`.
func sourceOffset(p part, n int) int {
	extra := strings.Count(p.text[:min(n, len(p.text))], "${")
	return p.pos + n + extra
}

// LineColumn is the line and column, both from 1, of byte offset pos of
// src; the column counts characters.
func LineColumn(src string, pos int) (line, column int) {
	pos = max(min(pos, len(src)), 0)
	before := src[:pos]
	line = strings.Count(before, "\n") + 1
	return line, utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
}
