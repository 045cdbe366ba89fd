package jexl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser/lexer"
)

// MaxLen is the longest expression, in bytes, that Compile accepts.
const MaxLen = 4 << 10

const usableWords = "only f:executeMetric(...), f:previous(...), numbers, strings, true, false, null, " +
	"the operators and, or, not, eq, ne, lt, le, gt, ge, div, mod and the functions " +
	"abs, min, max, round, floor and ceil may be used"

// wordOps are the JEXL word operators and the expr symbols they become.
var wordOps = map[string]string{
	"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
	"div": "/", "mod": "%",
	"and": "&&", "or": "||", "not": "!",
}

// symbolOps are the operator tokens passed through unchanged.
var symbolOps = map[string]bool{
	"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true,
	"!": true, "&&": true, "||": true, ",": true,
}

// rejected explains the expr operators that look plausible but are outside the language.
var rejected = map[string]string{
	".":   `member access with "." is not supported`,
	"?.":  `member access with "?." is not supported`,
	"..":  `ranges with ".." are not supported`,
	"|":   `the pipe operator "|" is not supported`,
	"??":  `the "??" operator is not supported`,
	"?":   `the conditional operator "? :" is not supported`,
	":":   `":" may only be used in f:executeMetric(...)`,
	"=":   `assignment is not supported; compare with == or eq`,
	";":   `only one expression is allowed; ";" is not supported`,
	"#":   `"#" is not supported`,
	"^":   `the "^" operator is not supported`,
	"**":  `the "**" operator is not supported`,
	"&":   `the "&" operator is not supported; use && or and`,
	"[":   `indexing and lists with [...] are not supported`,
	"]":   `indexing and lists with [...] are not supported`,
	"{":   `maps and blocks with {...} are not supported`,
	"}":   `maps and blocks with {...} are not supported`,
	"let": `variables (let) are not supported`,
}

// translation is a JEXL expression rewritten as expr source.
type translation struct {
	src       string   // JEXL source
	source    string   // expr source
	metrics   []string // distinct metric URIs in order of first appearance
	vars      []string // expr variable holding the value of metrics[i]
	metricPos []int    // byte offset of the first call of metrics[i]
	spans     []span   // output token positions, ascending
	literal   *string  // the value when the whole expression is one string literal
	names     []string // distinct text variables read, in order of first appearance
	nameVars  []string // expr variable holding the value of names[i]
	prevs     []string // distinct metric URIs read with f:previous, in order of first appearance
	prevVars  []string // expr variable holding the previous value of prevs[i]
}

// translator holds the state of one translate call.
type translator struct {
	src   string
	runes []int // byte offset of each rune the lexer counts, then len(src)
	toks  []lexer.Token
	out   strings.Builder
	outN  int // runes written to out
	t     translation
	// allowed are the text variables the expression may read, such as
	// "subject" or "subscription.title".
	allowed []string
}

// translate checks src against the language and rewrites it as expr source: metric calls
// become variables, word operators become symbols, numbers become float literals and string
// literals are copied byte for byte.
func translate(src string) (*translation, error) { return translateWith(src, nil) }

// translateWith is translate for an expression that may also read the text
// variables names, dotted ones (subscription.title) included.
func translateWith(src string, names []string) (*translation, error) {
	if len(src) > MaxLen {
		return nil, &Error{Pos: -1, Msg: fmt.Sprintf("expression is longer than %d bytes", MaxLen)}
	}
	if err := checkUTF8(src); err != nil {
		return nil, err
	}
	tr := &translator{src: src, runes: runeOffsets(src), allowed: names}
	toks, err := lexer.Lex(file.NewSource(src))
	if err != nil {
		return nil, tr.lexError(err)
	}
	tr.toks = toks
	if len(toks) == 0 || toks[0].Kind == lexer.EOF {
		return nil, &Error{Pos: 0, Msg: "expression is empty"}
	}
	if len(toks) == 2 && toks[0].Kind == lexer.String && toks[1].Kind == lexer.EOF {
		v := toks[0].Value
		tr.t.literal = &v
	}
	for i := 0; i < len(toks) && toks[i].Kind != lexer.EOF; i++ {
		n, err := tr.token(i)
		if err != nil {
			return nil, err
		}
		i += n
	}
	tr.t.spans = append(tr.t.spans, span{out: tr.outN, in: len(src), end: len(src)})
	tr.t.src = src
	tr.t.source = tr.out.String()
	return &tr.t, nil
}

// checkUTF8 rejects text that is not valid UTF-8, which expr would silently alter inside string
// literals.
func checkUTF8(src string) error {
	for i, r := range src {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(src[i:]); n == 1 {
				return &Error{Pos: i, Msg: "text is not valid UTF-8"}
			}
		}
	}
	return nil
}

// runeOffsets maps the rune offsets used by expr's lexer to byte offsets.
func runeOffsets(src string) []int {
	offs := make([]int, 0, len(src)+1)
	for i := range src {
		offs = append(offs, i)
	}
	return append(offs, len(src))
}

// pos is the byte offset of rune offset r.
func (tr *translator) pos(r int) int {
	if r < 0 {
		return 0
	}
	if r >= len(tr.runes) {
		return len(tr.src)
	}
	return tr.runes[r]
}

func (tr *translator) lexError(err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return &Error{Pos: -1, Msg: err.Error()}
	}
	msg := fe.Message
	if msg == "literal not terminated" {
		msg = "string is not closed"
	}
	return &Error{Pos: tr.pos(fe.From), Msg: msg}
}

// at returns toks[j], or the final EOF token when j is past the end.
func (tr *translator) at(j int) lexer.Token {
	if j < len(tr.toks) {
		return tr.toks[j]
	}
	return tr.toks[len(tr.toks)-1]
}

func (tr *translator) fail(tok lexer.Token, format string, args ...any) error {
	at := tr.pos(tok.From)
	if tok.Kind == lexer.EOF {
		at = len(tr.src)
	}
	return &Error{Pos: at, Msg: fmt.Sprintf(format, args...)}
}

// emit appends one output token that came from the source token tok.
func (tr *translator) emit(tok lexer.Token, text string) {
	tr.emitFrom(tr.pos(tok.From), tr.pos(tok.To), text)
}

// emitFrom appends one output token that came from src[from:to].
func (tr *translator) emitFrom(from, to int, text string) {
	if tr.outN > 0 {
		tr.out.WriteByte(' ')
		tr.outN++
	}
	tr.t.spans = append(tr.t.spans, span{out: tr.outN, in: from, end: to})
	tr.out.WriteString(text)
	tr.outN += utf8.RuneCountInString(text)
}

// token translates toks[i] and reports how many further tokens it consumed.
func (tr *translator) token(i int) (int, error) {
	tok := tr.toks[i]
	switch tok.Kind {
	case lexer.Number:
		lit, err := floatLiteral(tok.Value)
		if err != nil {
			return 0, tr.fail(tok, "%v", err)
		}
		tr.emit(tok, lit)
	case lexer.String:
		text, err := tr.stringText(tok)
		if err != nil {
			return 0, err
		}
		tr.emit(tok, text)
	case lexer.Bytes:
		return 0, tr.fail(tok, "byte strings are not supported; write the string in quotes")
	case lexer.Identifier:
		return tr.identifier(i)
	case lexer.Operator:
		if sym, ok := wordOps[tok.Value]; ok {
			tr.emit(tok, sym)
		} else if symbolOps[tok.Value] {
			tr.emit(tok, tok.Value)
		} else {
			return 0, tr.fail(tok, "%s", rejectMsg(tok.Value))
		}
	case lexer.Bracket:
		if tok.Value != "(" && tok.Value != ")" {
			return 0, tr.fail(tok, "%s", rejectMsg(tok.Value))
		}
		tr.emit(tok, tok.Value)
	default:
		return 0, tr.fail(tok, "unexpected %q", tok.Value)
	}
	return 0, nil
}

func rejectMsg(op string) string {
	if msg, ok := rejected[op]; ok {
		return msg
	}
	return fmt.Sprintf("%q is not supported", op)
}

// stringText returns the source text of a string literal, which must use single or double
// quotes; expr reads it back to the same value.
func (tr *translator) stringText(tok lexer.Token) (string, error) {
	from, to := tr.pos(tok.From), tr.pos(tok.To)
	if from >= len(tr.src) || (tr.src[from] != '\'' && tr.src[from] != '"') {
		return "", tr.fail(tok, "strings must be in single or double quotes")
	}
	return tr.src[from:to], nil
}

func (tr *translator) identifier(i int) (int, error) {
	tok := tr.toks[i]
	name := tok.Value
	switch {
	case name == "true" || name == "false":
		tr.emit(tok, name)
	case name == "null":
		tr.emit(tok, "nil")
	case wordOps[name] != "":
		tr.emit(tok, wordOps[name])
	case name == "f" && tr.at(i+1).Is(lexer.Operator, ":"):
		return tr.metricCall(i)
	case name == "executeMetric":
		return 0, tr.fail(tok, "write executeMetric with its namespace: f:executeMetric('<metric uri>')")
	case tr.varRoot(name):
		return tr.variable(i)
	case funcs[name] != nil:
		if !tr.at(i+1).Is(lexer.Bracket, "(") {
			return 0, tr.fail(tok, "%s is a function: write %s(...)", name, name)
		}
		tr.emit(tok, name)
	default:
		if len(tr.allowed) > 0 {
			return 0, tr.fail(tok, "unknown word %q: %s, and the variables %s", name, usableWords, strings.Join(tr.allowed, ", "))
		}
		return 0, tr.fail(tok, "unknown word %q: %s", name, usableWords)
	}
	return 0, nil
}

// varRoot reports whether name is an allowed variable or the first part of
// a dotted one.
func (tr *translator) varRoot(name string) bool {
	for _, v := range tr.allowed {
		if v == name || strings.HasPrefix(v, name+".") {
			return true
		}
	}
	return false
}

// variable translates the text variable starting at toks[i], its dotted
// parts joined, into the expr variable holding its value.
func (tr *translator) variable(i int) (int, error) {
	name, n := tr.toks[i].Value, 0
	for tr.at(i+n+1).Is(lexer.Operator, ".") && tr.at(i+n+2).Kind == lexer.Identifier && tr.varRoot(name+"."+tr.at(i+n+2).Value) {
		name += "." + tr.at(i+n+2).Value
		n += 2
	}
	if !slices.Contains(tr.allowed, name) {
		if tr.at(i+n+1).Is(lexer.Operator, ".") && tr.at(i+n+2).Kind == lexer.Identifier {
			name += "." + tr.at(i+n+2).Value
		}
		return 0, tr.fail(tr.toks[i], "unknown variable %q: the template may read %s", name, strings.Join(tr.allowed, ", "))
	}
	from, to := tr.pos(tr.toks[i].From), tr.pos(tr.toks[i+n].To)
	tr.emitFrom(from, to, tr.nameVar(name))
	return n, nil
}

// nameVar returns the expr variable of the text variable name, allocating
// one on its first appearance.
func (tr *translator) nameVar(name string) string {
	for j, n := range tr.t.names {
		if n == name {
			return tr.t.nameVars[j]
		}
	}
	v := "s" + strconv.Itoa(len(tr.t.names))
	tr.t.names = append(tr.t.names, name)
	tr.t.nameVars = append(tr.t.nameVars, v)
	return v
}

// metricCall translates f:executeMetric('<uri>') starting at toks[i] (the "f") into the
// variable holding that metric's value.
func (tr *translator) metricCall(i int) (int, error) {
	fn := tr.at(i + 2)
	if fn.Kind != lexer.Identifier {
		return 0, tr.fail(fn, "expected a function name after f:")
	}
	name := fn.Value
	if name != "executeMetric" && name != "previous" {
		return 0, tr.fail(fn, "unknown function f:%s: only f:executeMetric and f:previous are available", name)
	}
	if open := tr.at(i + 3); !open.Is(lexer.Bracket, "(") {
		return 0, tr.fail(open, "f:%s is a function: write f:%s('<metric uri>')", name, name)
	}
	arg := tr.at(i + 4)
	if arg.Kind != lexer.String {
		return 0, tr.fail(arg, "f:%s takes a metric URI in quotes", name)
	}
	if _, err := tr.stringText(arg); err != nil {
		return 0, err
	}
	if arg.Value == "" {
		return 0, tr.fail(arg, "f:%s needs a metric URI, not an empty string", name)
	}
	if closing := tr.at(i + 5); !closing.Is(lexer.Bracket, ")") {
		return 0, tr.fail(closing, "f:%s takes one metric URI in quotes", name)
	}
	from, to := tr.pos(tr.toks[i].From), tr.pos(tr.toks[i+5].To)
	if name == "previous" {
		tr.emitFrom(from, to, tr.prevVar(arg.Value))
	} else {
		tr.emitFrom(from, to, tr.metricVar(arg.Value, from))
	}
	return 5, nil
}

// prevVar returns the variable for the previous value of uri, allocating
// one on its first appearance.
func (tr *translator) prevVar(uri string) string {
	for j, m := range tr.t.prevs {
		if m == uri {
			return tr.t.prevVars[j]
		}
	}
	v := "p" + strconv.Itoa(len(tr.t.prevs))
	tr.t.prevs = append(tr.t.prevs, uri)
	tr.t.prevVars = append(tr.t.prevVars, v)
	return v
}

// metricVar returns the variable for uri, allocating one on its first appearance.
func (tr *translator) metricVar(uri string, at int) string {
	for j, m := range tr.t.metrics {
		if m == uri {
			return tr.t.vars[j]
		}
	}
	v := "m" + strconv.Itoa(len(tr.t.metrics))
	tr.t.metrics = append(tr.t.metrics, uri)
	tr.t.vars = append(tr.t.vars, v)
	tr.t.metricPos = append(tr.t.metricPos, at)
	return v
}

// floatLiteral checks a decimal number and writes it as an expr float literal, so that all
// arithmetic happens on float64 like the metric values it mixes with.
func floatLiteral(s string) (string, error) {
	if strings.Trim(s, "0123456789.eE+-") != "" {
		return "", fmt.Errorf("number %q: only decimal numbers like 16, 2.5 or 1e6 are supported", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("number %q is not valid or too large", s)
	}
	lit := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(lit, ".e") {
		lit += ".0"
	}
	return lit, nil
}
