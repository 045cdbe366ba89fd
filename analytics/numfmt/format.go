package numfmt

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// Format formats v with an Excel-style number format pattern such as
// `#,##0.00`, `0.0%`, `$#,##0`, `#,##0.0,"K"`, `# ?/?` or `yyyy-mm-dd hh:mm`.
//
// It knows digit placeholders (0, # and ?), thousands separators, trailing
// commas that scale by a thousand, percent signs (each multiplies by 100),
// scientific notation (0.00E+00), quoted and escaped literals, _x spaces,
// [$€-407] currency symbols and up to four ;-separated sections
// (positive;negative;zero) with optional [>=1000] conditions. Colours and the
// platform's [=null] sections do not change the text (Color tells the
// colour). Rounding is half away from zero on the shortest decimal form of
// v, so 2.675 with `0.00` is "2.68"; a negative value that rounds to zero has
// no minus sign. An empty pattern gives the plain shortest decimal form, as
// does General.
//
// Fractions: `# ?/?` and `# ??/??` write the integer part and the closest
// fraction whose denominator has at most as many digits as the pattern has
// denominator placeholders, `?/?` an improper fraction, and `# ?/8` or
// `0 ?/100` a fixed denominator, so 1.5 is "1 1/2" and 0.3333 with `?/?` is
// "1/3". ? placeholders add no alignment spaces, a whole number is written
// without a fraction ("2"), and a zero integer part that # or ? leave blank
// is left out ("1/2").
//
// Dates and times: a section with date or time codes and no digit
// placeholders reads v as an Excel serial date, days since 1899-12-30 with
// the time of day as the fraction (before 1900-03-01 in Excel's own
// calendar, which has a 1900-02-29). It knows yy and yyyy; m, mm, mmm (Jan),
// mmmm (January) and mmmmm (J); d, dd, ddd (Mon) and dddd (Monday); h and
// hh; m and mm as minutes right after hours or before seconds; s and ss;
// .0 to .000 after seconds; AM/PM and A/P (a twelve-hour clock, written as
// the pattern spells them); and the elapsed [h], [mm] and [ss]. Codes are
// read in any case and names are English. Times round to the shown second or
// fraction of one. A negative value, NaN, or one from the year 10000 on is
// "########", as Excel fills such a cell with #.
//
// Outside date sections NaN and ±Inf are "NaN", "Inf" and "-Inf".
func Format(v float64, pattern string) string {
	if strings.TrimSpace(pattern) == "" {
		return plain(v)
	}
	sec, ownSign := choose(compile(pattern), v)
	switch {
	case sec == nil:
		return plain(v)
	case sec.date:
		return sec.formatDate(v)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return plain(v)
	}
	return sec.format(math.Abs(v), v < 0 && !ownSign)
}

// choose picks the section for v and reports whether that section writes the
// sign itself (the negative section of a two- or three-part pattern).
func choose(secs []section, v float64) (*section, bool) {
	var usable []*section
	conditional := false
	for i := range secs {
		if secs[i].null {
			continue
		}
		usable = append(usable, &secs[i])
		conditional = conditional || secs[i].cond != nil
	}
	if len(usable) == 0 {
		return nil, false
	}
	if conditional {
		var fallback *section
		for _, s := range usable {
			if s.cond == nil {
				if fallback == nil {
					fallback = s
				}
				continue
			}
			if s.cond.match(v) {
				return s, s.cond.negativeOnly()
			}
		}
		if fallback == nil {
			fallback = usable[len(usable)-1]
		}
		return fallback, false
	}
	switch {
	case v < 0 && len(usable) >= 2:
		return usable[1], true
	case v == 0 && len(usable) >= 3:
		return usable[2], false
	}
	return usable[0], false
}

// cache holds compiled patterns; a report uses a handful of them for many
// values. It stops growing at cacheMax entries.
var (
	cache    sync.Map
	cacheLen int
	cacheMu  sync.Mutex
)

const cacheMax = 1024

func compile(pattern string) []section {
	if s, ok := cache.Load(pattern); ok {
		return s.([]section)
	}
	parts := splitSections(pattern)
	secs := make([]section, len(parts))
	for i, p := range parts {
		secs[i] = parseSection(p)
	}
	cacheMu.Lock()
	if cacheLen < cacheMax {
		if _, loaded := cache.LoadOrStore(pattern, secs); !loaded {
			cacheLen++
		}
	}
	cacheMu.Unlock()
	return secs
}

// format writes the section for the magnitude abs; neg asks for a leading
// minus sign.
func (s *section) format(abs float64, neg bool) string {
	var b strings.Builder
	zero := true // a section without digits writes no sign
	for _, t := range s.toks {
		switch t.kind {
		case tNum:
			digits, z := s.num.format(abs)
			zero = z
			b.WriteString(digits)
		case tGeneral:
			zero = abs == 0
			b.WriteString(plain(abs))
		default:
			b.WriteString(t.text)
		}
	}
	if neg && !zero && (s.hasNum || s.general) {
		return "-" + b.String()
	}
	return b.String()
}

// decimal is a non-negative number 0.d1d2d3... × 10^dp with no leading zero
// digit; no digits is zero.
type decimal struct {
	d  []byte
	dp int
}

func newDecimal(abs float64) decimal {
	if abs == 0 {
		return decimal{}
	}
	s := strconv.FormatFloat(abs, 'e', -1, 64) // d.ddde±xx
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	d := []byte(strings.Replace(mant, ".", "", 1))
	return decimal{d: d, dp: e + 1}
}

// round keeps frac digits after the decimal point, rounding half away from zero.
func (x *decimal) round(frac int) {
	keep := x.dp + frac
	if keep >= len(x.d) {
		return
	}
	up := keep >= 0 && x.d[keep] >= '5'
	if keep < 0 {
		keep = 0
	}
	x.d = x.d[:keep]
	if up {
		i := len(x.d) - 1
		for ; i >= 0 && x.d[i] == '9'; i-- {
		}
		if i < 0 {
			x.d = append(x.d[:0], '1')
			x.dp++
		} else {
			x.d[i]++
			x.d = x.d[:i+1]
		}
	}
	for len(x.d) > 0 && x.d[len(x.d)-1] == '0' {
		x.d = x.d[:len(x.d)-1]
	}
}

func (x decimal) isZero() bool { return len(x.d) == 0 }

// intDigits returns the digits before the decimal point, "" for none.
func (x decimal) intDigits() string {
	if x.dp <= 0 || len(x.d) == 0 {
		return ""
	}
	if x.dp <= len(x.d) {
		return string(x.d[:x.dp])
	}
	return string(x.d) + strings.Repeat("0", x.dp-len(x.d))
}

// fracDigits returns exactly n digits after the decimal point.
func (x decimal) fracDigits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
		if j := x.dp + i; j >= 0 && j < len(x.d) {
			b[i] = x.d[j]
		}
	}
	return string(b)
}

// format writes the digits of abs; zero reports whether they are all zeros.
func (n *number) format(abs float64) (string, bool) {
	if n.frac != nil {
		return n.formatFraction(abs)
	}
	x := newDecimal(abs)
	x.dp += n.shift
	if x.isZero() {
		x.dp = 0
	}
	exp := 0
	if n.exp {
		exp = n.normalize(&x)
	} else {
		x.round(len(n.fracPh))
	}
	var b strings.Builder
	b.WriteString(n.integer(x.intDigits()))
	if n.point {
		b.WriteByte('.')
	}
	b.WriteString(n.fraction(x.fracDigits(len(n.fracPh))))
	if n.exp {
		b.WriteString(n.exponent(exp))
	}
	return b.String(), x.isZero()
}

// normalize shifts x so that it has as many integer digits as the pattern has
// integer placeholders (at least one), rounds it, and returns the exponent.
func (n *number) normalize(x *decimal) int {
	if x.isZero() {
		return 0
	}
	want := max(len(n.intPh), 1)
	exp := x.dp - want
	x.dp = want
	x.round(len(n.fracPh))
	if x.dp > want { // 9.99 rounded up to 10.0
		exp += x.dp - want
		x.dp = want
	}
	return exp
}

// integer lays the integer digits over the integer placeholders.
func (n *number) integer(digits string) string {
	var pad []byte
	// Placeholders to the left of the digits print a 0, a space or nothing.
	missing := len(n.intPh) - len(digits)
	for i := 0; i < missing; i++ {
		switch n.intPh[i] {
		case '0':
			pad = append(pad, '0')
		case '?':
			pad = append(pad, ' ')
		}
	}
	s := string(pad) + digits
	if n.grouping {
		s = group(s)
	}
	return s
}

// group inserts thousands separators into a run of digits (and pad spaces).
func group(s string) string {
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			if s[i-1] == ' ' {
				b.WriteByte(' ')
			} else {
				b.WriteByte(',')
			}
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// fraction drops or blanks the trailing zeros that fall on # or ? placeholders.
func (n *number) fraction(digits string) string {
	b := []byte(digits)
	end := len(b)
	for i := len(b) - 1; i >= 0 && b[i] == '0'; i-- {
		if n.fracPh[i] == '#' {
			end = i
		} else if n.fracPh[i] == '?' {
			b[i] = ' '
		} else {
			break
		}
	}
	return string(b[:end])
}

func (n *number) exponent(exp int) string {
	var b strings.Builder
	if n.expUpper {
		b.WriteByte('E')
	} else {
		b.WriteByte('e')
	}
	switch {
	case exp < 0:
		b.WriteByte('-')
		exp = -exp
	case n.expPlus:
		b.WriteByte('+')
	}
	d := strconv.Itoa(exp)
	if len(d) < n.expMin {
		b.WriteString(strings.Repeat("0", n.expMin-len(d)))
	}
	b.WriteString(d)
	return b.String()
}

// plain is the shortest decimal form of v that reads back as v, in exponent
// form only below 1e-6 or from 1e21 up, as JSON writes numbers; NaN and ±Inf
// are "NaN", "Inf" and "-Inf".
func plain(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	if abs := math.Abs(v); abs < 1e-6 || abs >= 1e21 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
