package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Axis returns pattern changed to label values that lie step apart, as the
// ticks of a chart's axis do: with as many decimals as step needs once the
// pattern's percent and thousands scaling apply, no more and no fewer. So
// `$#,##0.00` for a step of 500,000 is `$#,##0`, and `0.0%` for 0.05 is `0%`.
// Scientific, fraction, date and empty patterns come back unchanged.
func Axis(pattern string, step float64) string {
	if strings.TrimSpace(pattern) == "" || !(step > 0) || math.IsInf(step, 0) {
		return pattern
	}
	parts := splitSections(pattern)
	for i, p := range parts {
		sec := parseSection(p)
		if !sec.hasNum || sec.num.exp || sec.num.frac != nil {
			continue
		}
		var b strings.Builder
		for _, t := range sec.toks {
			if t.kind == tNum {
				b.WriteString(sec.num.withDecimals(t.raw, decimalsFor(step, sec.num.shift)))
			} else {
				b.WriteString(t.raw)
			}
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, ";")
}

// decimalsFor is the number of decimals that values step apart need once
// shifted by a power of ten.
func decimalsFor(step float64, shift int) int {
	scaled := step * math.Pow(10, float64(max(min(shift, 300), -300)))
	// Twelve significant digits drop the noise of the multiplication.
	v, err := strconv.ParseFloat(strconv.FormatFloat(scaled, 'g', 12, 64), 64)
	if err != nil || v == 0 || math.IsInf(v, 0) {
		return 0
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	_, frac, _ := strings.Cut(s, ".")
	return min(len(frac), 10)
}

// withDecimals rewrites the placeholders raw of n with n decimals.
func (n *number) withDecimals(raw string, decimals int) string {
	intPart, _, _ := strings.Cut(raw, ".")
	intPart = strings.TrimRight(intPart, ",")
	if intPart == "" {
		intPart = "0"
	}
	if decimals > 0 {
		intPart += "." + strings.Repeat("0", decimals)
	}
	return intPart + strings.Repeat(",", n.commas)
}
