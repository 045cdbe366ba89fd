package maql

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokWord             // keyword or function name: SELECT, create, Sum
	tokIdent            // {dotted.name}; text holds the name
	tokURI              // [/svc/md/p/obj/1]; text holds the URI
	tokString           // "quoted"; text holds the unescaped value
	tokNumber           // 12 or 1.5
	tokPunct            // ( ) , ; = <> < > <= >= + - * /
)

const (
	maxIdentLen = 255
	maxURILen   = 2048
)

type token struct {
	kind tokenKind
	text string // value of the token
	raw  string // source text of the token
	pos  Pos
}

// lexer splits MAQL source into tokens on demand, so the first error in the text is the one
// reported. Comments are recognised only in scripts: a metric has no comments, and "--" there
// is two minus signs.
type lexer struct {
	src      string
	off      int
	line     int
	col      int
	comments bool
}

func newLexer(src string, comments bool) lexer {
	return lexer{src: src, line: 1, col: 1, comments: comments}
}

func (l *lexer) pos() Pos { return Pos{Line: l.line, Col: l.col} }

// peek returns the rune at the current offset without consuming it; 0 at the end.
func (l *lexer) peek() rune {
	if l.off >= len(l.src) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.off:])
	return r
}

// advance consumes one rune and keeps the line and column up to date.
func (l *lexer) advance() rune {
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	l.off += size
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
	return r
}

// errorf returns an error at the position at, naming as its token the source text from start
// through the current character, shortened to a readable length.
func (l *lexer) errorf(at Pos, start int, format string, args ...any) *Error {
	end := l.off
	if end < len(l.src) {
		_, size := utf8.DecodeRuneInString(l.src[end:])
		end += size
	}
	return &Error{Line: at.Line, Col: at.Col, Token: shorten(l.src[start:end]), Msg: fmt.Sprintf(format, args...)}
}

// shorten cuts s to at most 40 characters on a character boundary and replaces invalid UTF-8.
func shorten(s string) string {
	const limit = 40
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

func (l *lexer) next() (token, *Error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	at, start := l.pos(), l.off
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: at}, nil
	}
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	if r == utf8.RuneError && size == 1 {
		return token{}, l.errorf(at, start, "invalid UTF-8 encoding")
	}
	switch {
	case isWordStart(r):
		for isWordPart(l.peek()) {
			l.advance()
		}
		return l.token(tokWord, l.src[start:l.off], start, at), nil
	case isDigit(r):
		return l.number(start, at), nil
	case r == '{':
		return l.ident(start, at)
	case r == '[':
		return l.uri(start, at)
	case r == '"':
		return l.str(start, at)
	}
	return l.punct(start, at)
}

func (l *lexer) token(kind tokenKind, text string, start int, at Pos) token {
	return token{kind: kind, text: text, raw: l.src[start:l.off], pos: at}
}

func (l *lexer) skipSpace() *Error {
	for l.off < len(l.src) {
		r := l.peek()
		switch {
		case unicode.IsSpace(r):
			l.advance()
		case l.comments && strings.HasPrefix(l.src[l.off:], "--"):
			for l.off < len(l.src) && l.peek() != '\n' {
				l.advance()
			}
		case l.comments && strings.HasPrefix(l.src[l.off:], "/*"):
			at, start := l.pos(), l.off
			end := strings.Index(l.src[l.off+2:], "*/")
			if end < 0 {
				l.off = start + 1
				return l.errorf(at, start, "unterminated comment")
			}
			for stop := l.off + 2 + end + 2; l.off < stop; {
				l.advance()
			}
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) number(start int, at Pos) token {
	for isDigit(l.peek()) {
		l.advance()
	}
	if l.peek() == '.' && l.off+1 < len(l.src) && isDigit(rune(l.src[l.off+1])) {
		l.advance()
		for isDigit(l.peek()) {
			l.advance()
		}
	}
	return l.token(tokNumber, l.src[start:l.off], start, at)
}

// ident lexes {name}, where name is [A-Za-z0-9_.]{1,255}.
func (l *lexer) ident(start int, at Pos) (token, *Error) {
	l.advance()
	for isIdentChar(l.peek()) {
		l.advance()
	}
	name := l.src[start+1 : l.off]
	switch {
	case l.off >= len(l.src):
		return token{}, l.errorf(at, start, "unterminated identifier, expected }")
	case l.peek() != '}':
		return token{}, l.errorf(at, start, "invalid character %q in identifier", l.peek())
	case name == "":
		return token{}, l.errorf(at, start, "empty identifier")
	case len(name) > maxIdentLen:
		return token{}, l.errorf(at, start, "identifier longer than %d characters", maxIdentLen)
	}
	l.advance()
	return l.token(tokIdent, name, start, at), nil
}

// uri lexes [/uri]. The content is checked further by the parser, which knows whether an
// object or an element is expected.
func (l *lexer) uri(start int, at Pos) (token, *Error) {
	l.advance()
	for isURIChar(l.peek()) {
		l.advance()
	}
	uri := l.src[start+1 : l.off]
	switch {
	case l.off >= len(l.src):
		return token{}, l.errorf(at, start, "unterminated URI, expected ]")
	case l.peek() != ']':
		return token{}, l.errorf(at, start, "invalid character %q in URI", l.peek())
	case !strings.HasPrefix(uri, "/"):
		return token{}, l.errorf(at, start, "URI must start with /")
	case len(uri) > maxURILen:
		return token{}, l.errorf(at, start, "URI longer than %d characters", maxURILen)
	}
	l.advance()
	return l.token(tokURI, uri, start, at), nil
}

// str lexes a double-quoted string with the escapes \" and \\.
func (l *lexer) str(start int, at Pos) (token, *Error) {
	l.advance()
	var b strings.Builder
	for {
		if l.off >= len(l.src) {
			return token{}, l.errorf(at, start, "unterminated string")
		}
		escAt := l.pos()
		r, size := utf8.DecodeRuneInString(l.src[l.off:])
		if r == utf8.RuneError && size == 1 {
			return token{}, l.errorf(escAt, l.off, "invalid UTF-8 encoding")
		}
		l.advance()
		switch r {
		case '"':
			return l.token(tokString, b.String(), start, at), nil
		case '\\':
			e := l.peek()
			if e != '"' && e != '\\' {
				return token{}, l.errorf(escAt, l.off-1, `invalid escape in string, expected \" or \\`)
			}
			l.advance()
			b.WriteRune(e)
		default:
			b.WriteRune(r)
		}
	}
}

var twoCharPuncts = []string{"<>", "<=", ">="}

func (l *lexer) punct(start int, at Pos) (token, *Error) {
	for _, p := range twoCharPuncts {
		if strings.HasPrefix(l.src[l.off:], p) {
			l.advance()
			l.advance()
			return l.token(tokPunct, p, start, at), nil
		}
	}
	r := l.peek()
	if !strings.ContainsRune("(),;=<>+-*/", r) {
		return token{}, l.errorf(at, start, "unexpected character %q", r)
	}
	l.advance()
	return l.token(tokPunct, string(r), start, at), nil
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func isWordStart(r rune) bool { return isLetter(r) || r == '_' }

func isWordPart(r rune) bool { return isWordStart(r) || isDigit(r) }

func isIdentChar(r rune) bool { return isWordPart(r) || r == '.' }

// isURIChar reports the characters allowed in a bracketed URI: enough for object and element
// URIs, nothing that needs quoting.
func isURIChar(r rune) bool {
	return isIdentChar(r) || strings.ContainsRune("/?=&%~:-", r)
}

// validIdent reports whether s can be written as {s}.
func validIdent(s string) bool {
	if s == "" || len(s) > maxIdentLen {
		return false
	}
	for _, r := range s {
		if !isIdentChar(r) {
			return false
		}
	}
	return true
}
