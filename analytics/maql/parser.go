package maql

import (
	"fmt"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of parentheses, sub-selects and prefix operators, so a hostile
// input cannot exhaust the stack.
const maxDepth = 200

// parser holds the state shared by the script and metric parsers. Its methods report a syntax
// error by panicking with a bailout, which the exported entry points turn back into an error.
type parser struct {
	lx    lexer
	tok   token
	depth int
}

type bailout struct{ err *Error }

func newParser(src string, comments bool) *parser {
	return &parser{lx: newLexer(src, comments)}
}

// run calls parse and returns the syntax error it raised, if any. Panics that are not syntax
// errors are programming errors and propagate.
func (p *parser) run(parse func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			err = b.err
		}
	}()
	p.next()
	parse()
	return nil
}

func (p *parser) next() {
	t, err := p.lx.next()
	if err != nil {
		panic(bailout{err})
	}
	p.tok = t
}

func (p *parser) failAt(t token, format string, args ...any) {
	panic(bailout{&Error{Line: t.pos.Line, Col: t.pos.Col, Token: shorten(t.raw), Msg: fmt.Sprintf(format, args...)}})
}

// unexpected fails at the current token, saying what was expected instead.
func (p *parser) unexpected(want string) {
	p.unexpectedAt(p.tok, want)
}

func (p *parser) unexpectedAt(t token, want string) {
	p.failAt(t, "unexpected %s, expected %s", describe(t), want)
}

// describe names a token in an error message.
func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "string " + shorten(t.raw)
	}
	return strconv.Quote(shorten(t.raw))
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failAt(p.tok, "nesting deeper than %d levels", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) isWord(w string) bool {
	return p.tok.kind == tokWord && strings.EqualFold(p.tok.text, w)
}

func (p *parser) acceptWord(w string) bool {
	if p.isWord(w) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectWord(w string) {
	if !p.acceptWord(w) {
		p.unexpected(w)
	}
}

func (p *parser) isPunct(s string) bool {
	return p.tok.kind == tokPunct && p.tok.text == s
}

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) {
	if !p.acceptPunct(s) {
		p.unexpected(strconv.Quote(s))
	}
}

// expectIdent consumes a {dotted.name} and returns the name.
func (p *parser) expectIdent() string {
	if p.tok.kind != tokIdent {
		p.unexpected("{identifier}")
	}
	name := p.tok.text
	p.next()
	return name
}

// expectString consumes a quoted string and returns its value.
func (p *parser) expectString() string {
	if p.tok.kind != tokString {
		p.unexpected("a quoted string")
	}
	s := p.tok.text
	p.next()
	return s
}

// expectInt consumes an integer in [lo, hi].
func (p *parser) expectInt(lo, hi int) int {
	t := p.tok
	if t.kind != tokNumber {
		p.unexpected("an integer")
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < lo || n > hi {
		p.unexpectedAt(t, fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	p.next()
	return n
}

// quote writes s as a MAQL string literal.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
