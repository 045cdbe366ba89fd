package numfmt

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of one piece of a pattern section.
type tokKind int

const (
	tLit     tokKind = iota // literal text
	tNum                    // the number itself
	tGeneral                // the General keyword: the number in its plain form
	tPercent                // a percent sign, which also scales the number
	tSpace                  // _x: a space as wide as x
	tFill                   // *x: fill with x (ignored when formatting)
	tBracket                // [Red], [Color3], [>=100]: kept for Excel only
	tDropped                // a bracket the platform knows but Excel does not
	tDate                   // a date or time code such as yyyy, mm or [h]
)

type token struct {
	kind tokKind
	text string // what Format prints
	raw  string // the source text, for ExcelFormat
	code dateCode
	n    int // digits of a subsecond or elapsed code
}

// condition is a section's [op value] test.
type condition struct {
	op  string
	val float64
}

func (c condition) match(v float64) bool {
	switch c.op {
	case "<":
		return v < c.val
	case "<=":
		return v <= c.val
	case ">":
		return v > c.val
	case ">=":
		return v >= c.val
	case "=":
		return v == c.val
	case "<>":
		return v != c.val
	}
	return false
}

// negativeOnly reports whether the condition accepts negative values only, so
// the section writes its own sign.
func (c condition) negativeOnly() bool {
	return (c.op == "<" && c.val <= 0) || (c.op == "<=" && c.val < 0)
}

// number describes the digits of a section.
type number struct {
	intPh    []byte // integer placeholders ('0', '#', '?'), left to right
	fracPh   []byte // fraction placeholders
	point    bool   // the pattern has a decimal point
	grouping bool   // thousands separators
	shift    int    // power of ten applied before formatting (% is +2, a trailing comma -3)
	commas   int    // trailing commas, each dividing by a thousand
	exp      bool   // scientific notation
	expPlus  bool   // E+ rather than E-: always print the exponent's sign
	expUpper bool
	expMin   int       // minimum exponent digits
	frac     *fraction // a fraction such as # ?/? (intPh is then its integer part)
}

// section is one of the ;-separated parts of a pattern.
type section struct {
	toks    []token
	cond    *condition
	null    bool // [=null]: the section for empty values, never used for numbers
	hasNum  bool
	general bool
	num     number
	color   string // the CSS colour of an Excel colour bracket, or ""

	date   bool // a date and time section: the value is an Excel serial date
	subsec int  // the subsecond digits a date section shows
	hour12 bool // AM/PM or A/P: hours on a twelve-hour clock
}

// parser builds a section, collecting adjacent literal text into one token.
type parser struct {
	section
	lit, litRaw strings.Builder
}

// splitSections splits a pattern at the semicolons outside quotes, escapes
// and brackets.
func splitSections(p string) []string {
	var out []string
	start, inQuote, inBracket := 0, false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case inQuote:
			inQuote = c != '"'
		case inBracket:
			inBracket = c != ']'
		case c == '"':
			inQuote = true
		case c == '[':
			inBracket = true
		case c == '\\' || c == '_' || c == '*':
			if i+1 < len(p) {
				_, size := utf8.DecodeRuneInString(p[i+1:])
				i += size
			}
		case c == ';':
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// parseSection reads one section of a pattern: a date section when it has
// date or time codes and no digit placeholders, a number section otherwise.
func parseSection(s string) section {
	if sec, ok := parseDate(s); ok {
		return sec
	}
	var ps parser
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '_' || c == '*' || c == '[':
			i = ps.shared(s, i, ps.bracket)
		case c == '%':
			ps.push(token{kind: tPercent, text: "%", raw: "%"})
			ps.num.shift += 2
			i++
		case !ps.hasNum && !ps.general && startsNumber(s[i:]):
			n := ps.number(s[i:])
			i += n
		case !ps.hasNum && !ps.general && len(s)-i >= 7 && strings.EqualFold(s[i:i+7], "general"):
			ps.general = true
			ps.push(token{kind: tGeneral, raw: "General"})
			i += 7
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			j := i + size
			for j < len(s) && !strings.ContainsRune(`"\_*[%0#?.Gg`, rune(s[j])) {
				j++
			}
			ps.addLit(s[i:j], quote(s[i:j]))
			i = j
		}
	}
	ps.flush()
	return ps.section
}

// shared reads the piece at s[i] that number and date sections read alike:
// quoted text, a \ escape, a _x space, a *x fill or a [...] bracket, whose
// content goes to bracket. It returns the index after the piece; an
// unterminated bracket is literal text up to the end.
func (ps *parser) shared(s string, i int, bracket func(string)) int {
	c := s[i]
	switch c {
	case '"':
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			end = len(s) - i - 1
		}
		ps.addLit(s[i+1:i+1+end], `"`+s[i+1:i+1+end]+`"`)
		return min(i+end+2, len(s))
	case '[':
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			ps.addLit(s[i:], quote(s[i:]))
			return len(s)
		}
		bracket(s[i+1 : i+end])
		return i + end + 1
	}
	r, size := utf8.DecodeRuneInString(s[i+1:])
	if i+1 >= len(s) {
		r, size = ' ', 0
	}
	raw := s[i : i+1+size]
	switch c {
	case '\\':
		ps.addLit(string(r), quote(string(r)))
	case '_':
		ps.push(token{kind: tSpace, text: " ", raw: raw})
	default:
		ps.push(token{kind: tFill, raw: raw})
	}
	return i + 1 + size
}

// addLit adds literal text; raw is its Excel spelling. Adjacent literals
// become one token.
func (ps *parser) addLit(text, raw string) {
	ps.lit.WriteString(text)
	ps.litRaw.WriteString(raw)
}

// push appends a token after any pending literal.
func (ps *parser) push(t token) {
	ps.flush()
	ps.toks = append(ps.toks, t)
}

func (ps *parser) flush() {
	if ps.lit.Len() == 0 && ps.litRaw.Len() == 0 {
		return
	}
	ps.toks = append(ps.toks, token{kind: tLit, text: ps.lit.String(), raw: ps.litRaw.String()})
	ps.lit.Reset()
	ps.litRaw.Reset()
}

// bracket handles the content of a [...] token.
func (ps *parser) bracket(b string) {
	raw := "[" + b + "]"
	switch {
	case strings.EqualFold(b, "=null"):
		ps.null = true
		ps.push(token{kind: tDropped, raw: raw})
	case strings.HasPrefix(b, "$"):
		// [$€-407]: a currency symbol with a locale.
		sym, _, _ := strings.Cut(b[1:], "-")
		ps.push(token{kind: tBracket, text: sym, raw: raw})
	case strings.HasPrefix(b, "<") || strings.HasPrefix(b, ">") || strings.HasPrefix(b, "="):
		op := b[:1]
		if len(b) > 1 && (b[1] == '=' || (b[0] == '<' && b[1] == '>')) {
			op = b[:2]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(b[len(op):]), 64)
		if err != nil {
			ps.push(token{kind: tDropped, raw: raw})
			return
		}
		ps.cond = &condition{op: op, val: v}
		ps.push(token{kind: tBracket, raw: raw})
	case excelColor(b) != "":
		if ps.color == "" {
			ps.color = cssColor(excelColor(b))
		}
		ps.push(token{kind: tBracket, raw: "[" + excelColor(b) + "]"})
	default:
		// Platform-only styling such as [color=#ff0000] or [backgroundColor=...].
		ps.push(token{kind: tDropped, raw: raw})
	}
}

func isPlaceholder(c byte) bool { return c == '0' || c == '#' || c == '?' }

// startsNumber reports whether s begins the digits of a pattern: a placeholder,
// or a decimal point followed by one.
func startsNumber(s string) bool {
	return isPlaceholder(s[0]) || (s[0] == '.' && len(s) > 1 && isPlaceholder(s[1]))
}

// number reads the digit placeholders at the start of s and returns how many
// bytes they take.
func (ps *parser) number(s string) int {
	n := &ps.num
	i, frac, pendingCommas := 0, false, 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case isPlaceholder(c):
			if pendingCommas > 0 && !frac && len(n.intPh) > 0 {
				n.grouping = true
			}
			pendingCommas = 0
			if frac {
				n.fracPh = append(n.fracPh, c)
			} else {
				n.intPh = append(n.intPh, c)
			}
			continue
		case c == ',':
			pendingCommas++
			continue
		case c == '.' && !frac:
			n.shift -= 3 * pendingCommas
			n.commas += pendingCommas
			pendingCommas = 0
			frac, n.point = true, true
			continue
		}
		break
	}
	n.shift -= 3 * pendingCommas
	n.commas += pendingCommas
	if end, ok := ps.readFraction(s, i); ok {
		ps.hasNum = true
		ps.push(token{kind: tNum, raw: s[:end]})
		return end
	}
	if i+2 < len(s) && (s[i] == 'E' || s[i] == 'e') && (s[i+1] == '+' || s[i+1] == '-') && isPlaceholder(s[i+2]) {
		n.exp, n.expUpper, n.expPlus = true, s[i] == 'E', s[i+1] == '+'
		i += 2
		for ; i < len(s) && isPlaceholder(s[i]); i++ {
			if s[i] == '0' {
				n.expMin++
			}
		}
	}
	ps.hasNum = true
	ps.push(token{kind: tNum, raw: s[:i]})
	return i
}
