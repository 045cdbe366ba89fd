package numfmt

import (
	"math/big"
	"strings"
	"unicode/utf8"
)

// fraction describes the fraction part of a pattern such as `# ?/?`,
// `??/??` or `0 ?/8`.
type fraction struct {
	whole bool   // an integer part comes first: # ?/? rather than ?/?
	sep   string // the text between the integer part and the numerator
	num   []byte // numerator placeholders
	den   []byte // denominator placeholders; none for a fixed denominator
	fixed int64  // the fixed denominator of ?/8, or 0
}

// maxFixed bounds a fixed denominator to nine digits.
const maxFixed = 999_999_999

// readFraction reads the rest of a fraction when the placeholders in s[:i] start
// one, and returns the index after it. They are the numerator when a slash
// follows them (?/?), else the integer part when a separator of spaces,
// quoted text or escapes, the numerator placeholders and a slash follow.
// The denominator is placeholders or a fixed number such as 8 or 100.
func (ps *parser) readFraction(s string, i int) (int, bool) {
	n := &ps.num
	if n.point || len(n.intPh) == 0 || i >= len(s) {
		return i, false
	}
	if s[i] == '/' {
		if n.grouping || n.commas > 0 {
			return i, false
		}
		f := &fraction{num: n.intPh}
		end, ok := f.denominator(s, i+1)
		if !ok {
			return i, false
		}
		n.intPh, n.frac = nil, f
		return end, true
	}
	sep, j := separator(s, i)
	k := j
	for k < len(s) && isPlaceholder(s[k]) {
		k++
	}
	if j == i || k == j || k >= len(s) || s[k] != '/' {
		return i, false
	}
	f := &fraction{whole: true, sep: sep, num: []byte(s[j:k])}
	end, ok := f.denominator(s, k+1)
	if !ok {
		return i, false
	}
	n.frac = f
	return end, true
}

// separator reads the spaces, quoted text and escaped characters at s[i:]
// and returns the text they print and the index after them.
func separator(s string, i int) (string, int) {
	var b strings.Builder
	for i < len(s) {
		switch s[i] {
		case ' ':
			b.WriteByte(' ')
			i++
		case '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return b.String(), i
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case '\\':
			if i+1 >= len(s) {
				return b.String(), i
			}
			_, size := utf8.DecodeRuneInString(s[i+1:])
			b.WriteString(s[i+1 : i+1+size])
			i += 1 + size
		default:
			return b.String(), i
		}
	}
	return b.String(), i
}

// denominator reads the denominator at s[i:], placeholders or a fixed
// number, and returns the index after it.
func (f *fraction) denominator(s string, i int) (int, bool) {
	j := i
	for j < len(s) && isPlaceholder(s[j]) {
		j++
	}
	if j > i {
		f.den = []byte(s[i:j])
		return j, true
	}
	if i >= len(s) || s[i] < '1' || s[i] > '9' {
		return i, false
	}
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		f.fixed = f.fixed*10 + int64(s[j]-'0')
		if f.fixed > maxFixed {
			return i, false
		}
		j++
	}
	return j, true
}

// formatFraction writes abs as a fraction; zero reports whether it shows
// zero. The ? placeholders of the numerator and denominator take no
// alignment spaces: the digits are written as they are, and only 0
// placeholders pad them (with zeros). A whole number writes only its
// integer part, and an integer part that # or ? leave blank is left out
// together with the separator, so 1.5 with `# ?/?` is "1 1/2", 2 is "2" and
// 0.5 is "1/2".
func (n *number) formatFraction(abs float64) (string, bool) {
	f := n.frac
	x := newDecimal(abs)
	x.dp += n.shift
	if x.isZero() {
		x.dp = 0
	}
	intDigits, rest := "", x.rat()
	if f.whole {
		intDigits, rest = x.intDigits(), x.fracRat()
	}
	p, q := f.approximate(rest)
	if f.whole && p.Cmp(q) >= 0 { // 0.99 is 1/1: carry into the integer part
		intDigits, p = increment(intDigits), p.SetInt64(0)
	}
	zero := p.Sign() == 0 && intDigits == ""
	frac := pad(p.String(), f.num) + "/" + pad(q.String(), f.den)
	switch {
	case !f.whole:
		return frac, zero
	case p.Sign() == 0:
		if intDigits == "" {
			intDigits = "0"
		}
		return n.integer(intDigits), zero
	case intDigits == "" && !strings.ContainsRune(string(n.intPh), '0'):
		return frac, zero
	}
	return n.integer(intDigits) + f.sep + frac, zero
}

// approximate returns the numerator and denominator that write x: over the
// fixed denominator, rounded half up, or the closest fraction whose
// denominator has no more digits than the pattern's denominator has
// placeholders.
func (f *fraction) approximate(x *big.Rat) (p, q *big.Int) {
	if f.fixed > 0 {
		q = big.NewInt(f.fixed)
		// p = ⌊(2·a·q + b) / 2b⌋ for x = a/b.
		p = new(big.Int).Mul(x.Num(), q)
		p.Add(p.Lsh(p, 1), x.Denom())
		return p.Quo(p, new(big.Int).Lsh(x.Denom(), 1)), q
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(f.den))), nil)
	return bestApproximation(x, limit.Sub(limit, big.NewInt(1)))
}

// bestApproximation returns the fraction closest to x ≥ 0 with a denominator
// of at most limit ≥ 1: the last convergent of x's continued fraction within
// the limit or the semiconvergent after it, whichever is closer (the
// convergent on a tie).
func bestApproximation(x *big.Rat, limit *big.Int) (*big.Int, *big.Int) {
	if x.Denom().Cmp(limit) <= 0 {
		return new(big.Int).Set(x.Num()), new(big.Int).Set(x.Denom())
	}
	p0, q0, p1, q1 := big.NewInt(0), big.NewInt(1), big.NewInt(1), big.NewInt(0)
	a, b := new(big.Int).Set(x.Num()), new(big.Int).Set(x.Denom())
	t, r := new(big.Int), new(big.Int)
	for {
		t.QuoRem(a, b, r)
		q2 := new(big.Int).Mul(t, q1)
		if q2.Add(q2, q0).Cmp(limit) > 0 {
			break
		}
		p2 := new(big.Int).Mul(t, p1)
		p0, q0, p1, q1 = p1, q1, p2.Add(p2, p0), q2
		a, b = b, new(big.Int).Set(r)
	}
	// The semiconvergent with the largest denominator within the limit.
	k := new(big.Int).Sub(limit, q0)
	k.Quo(k, q1)
	ps := new(big.Int).Add(p0, new(big.Int).Mul(k, p1))
	qs := new(big.Int).Add(q0, new(big.Int).Mul(k, q1))
	dc := new(big.Rat).Sub(new(big.Rat).SetFrac(p1, q1), x)
	ds := new(big.Rat).Sub(new(big.Rat).SetFrac(ps, qs), x)
	if dc.Abs(dc).Cmp(ds.Abs(ds)) <= 0 {
		return p1, q1
	}
	return ps, qs
}

// pad writes digits with leading zeros up to the 0 placeholders of ph.
func pad(digits string, ph []byte) string {
	if zeros := strings.Count(string(ph), "0"); len(digits) < zeros {
		return strings.Repeat("0", zeros-len(digits)) + digits
	}
	return digits
}

// increment adds one to a run of decimal digits ("" is zero).
func increment(digits string) string {
	b := []byte(digits)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

// rat returns x exactly.
func (x decimal) rat() *big.Rat {
	if x.isZero() {
		return new(big.Rat)
	}
	return scaled(string(x.d), len(x.d)-x.dp)
}

// fracRat returns the part of x after the decimal point exactly.
func (x decimal) fracRat() *big.Rat {
	if x.isZero() || x.dp >= len(x.d) {
		return new(big.Rat)
	}
	return scaled(string(x.d[max(x.dp, 0):]), len(x.d)-x.dp)
}

// scaled returns the integer digits divided by 10^exp.
func scaled(digits string, exp int) *big.Rat {
	d, _ := new(big.Int).SetString(digits, 10)
	ten := big.NewInt(10)
	if exp <= 0 {
		return new(big.Rat).SetInt(d.Mul(d, new(big.Int).Exp(ten, big.NewInt(int64(-exp)), nil)))
	}
	return new(big.Rat).SetFrac(d, new(big.Int).Exp(ten, big.NewInt(int64(exp)), nil))
}
