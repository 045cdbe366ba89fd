package jexl

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/expr-lang/expr/file"
)

// Error is a problem with an expression or a template, worded for the person who wrote it.
type Error struct {
	Pos int    // byte offset in the source, or -1 when the problem has no single place
	Msg string // what is wrong, without the position
}

func (e *Error) Error() string {
	if e.Pos < 0 {
		return e.Msg
	}
	return fmt.Sprintf("at offset %d: %s", e.Pos, e.Msg)
}

// shift returns err with its position moved by off bytes, for an expression embedded in a
// larger text. Errors of other types and errors without a position are returned unchanged.
func shift(err error, off int) error {
	var e *Error
	if !errors.As(err, &e) || e.Pos < 0 {
		return err
	}
	return &Error{Pos: e.Pos + off, Msg: e.Msg}
}

// span ties a token of the translated source (rune offset, as expr reports positions) to the
// JEXL text it came from, src[in:end].
type span struct {
	out int
	in  int
	end int
}

var (
	unexpectedToken = regexp.MustCompile(`^unexpected token [A-Za-z]+\(".*"\)$`)
	badArgument     = regexp.MustCompile(`^cannot use (\S+) as argument \(type float64\) to call (\S+)$`)
)

// exprError turns an error from expr (parse, check or run) into an *Error about the JEXL
// source, with the position mapped back and the wording in the terms of the language.
func (t *translation) exprError(err error) *Error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return &Error{Pos: -1, Msg: humanize(err.Error())}
	}
	if strings.Contains(fe.Message, "exceeds maximum allowed nodes") {
		// Where the parser gave up says nothing about what to change.
		return &Error{Pos: -1, Msg: humanize(fe.Message)}
	}
	sp := t.spanAt(fe.From)
	if unexpectedToken.MatchString(fe.Message) {
		// Quote the token as written, not as translated.
		return &Error{Pos: sp.in, Msg: fmt.Sprintf("unexpected %q", t.src[sp.in:sp.end])}
	}
	return &Error{Pos: sp.in, Msg: humanize(fe.Message)}
}

// spanAt returns the span of the output token at rune offset out of the translated source.
func (t *translation) spanAt(out int) span {
	i := sort.Search(len(t.spans), func(i int) bool { return t.spans[i].out > out })
	if i == 0 {
		return t.spans[0]
	}
	return t.spans[i-1]
}

func humanize(msg string) string {
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "compilation failed: "))
	if strings.Contains(msg, "exceeds maximum allowed nodes") {
		return fmt.Sprintf("expression is too complex (more than %d parts)", maxNodes)
	}
	if strings.HasPrefix(msg, "unexpected token EOF") {
		return "the expression ends too early"
	}
	if m := badArgument.FindStringSubmatch(msg); m != nil {
		fn, got := m[2], m[1]
		if fn == modFunc {
			fn = "%"
		}
		switch got {
		case "string":
			got = "text"
		case "bool":
			got = "true or false"
		}
		return fmt.Sprintf("%s takes numbers, not %s", fn, got)
	}
	msg = strings.ReplaceAll(msg, "float64", "number")
	msg = strings.ReplaceAll(msg, "interface {}", "any value")
	return msg
}

// kindName names the type of a value or of an expression for messages.
func kindName(v any) string {
	switch v.(type) {
	case float64:
		return "a number"
	case string:
		return "text"
	case bool:
		return "true or false"
	case nil:
		return "nothing"
	default:
		return fmt.Sprintf("a value of type %T", v)
	}
}
