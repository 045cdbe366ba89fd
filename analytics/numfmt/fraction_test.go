package numfmt

import (
	"math"
	"math/big"
	"testing"
)

func TestFormatFraction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		v       float64
		want    string
	}{
		{"mixed half", "# ?/?", 1.5, "1 1/2"},
		{"mixed third", "# ?/?", 0.3333, "1/3"},
		{"mixed pi one digit", "# ?/?", math.Pi, "3 1/7"},
		{"mixed pi two digits", "# ??/??", math.Pi, "3 14/99"},
		{"mixed pi three digits", "# ???/???", math.Pi, "3 16/113"},
		{"closest within one digit", "# ?/?", 0.35, "1/3"},
		{"whole number has no fraction", "# ?/?", 2, "2"},
		{"zero is 0", "# ?/?", 0, "0"},
		{"nearly whole carries", "# ?/?", 0.99, "1"},
		{"nearly whole carries up the digits", "# ?/?", 9.97, "10"},
		{"negative", "# ?/?", -1.25, "-1 1/4"},
		{"negative rounding to zero has no sign", "# ?/?", -0.01, "0"},
		{"negative section", "# ?/?;(# ?/?)", -1.5, "(1 1/2)"},
		{"zero integer placeholder", "0 ?/?", 0.5, "0 1/2"},
		{"zero placeholders pad", "0 00/00", 1.5, "1 01/02"},
		{"grouped integer part", "#,##0 ?/?", 1234.5, "1,234 1/2"},
		{"quoted separator", `#" and "?/?`, 2.75, "2 and 3/4"},
		{"escaped separator", `#\-?/?`, 2.75, "2-3/4"},
		{"improper", "?/?", 1.5, "3/2"},
		{"improper semiconvergent", "??/??", 3.14159, "311/99"},
		{"improper zero", "?/?", 0, "0/1"},
		{"improper tiny", "?/?", 1e-10, "0/1"},
		{"improper negative", "?/?", -0.75, "-3/4"},
		{"eighths", "# ?/8", 1.3, "1 2/8"},
		{"eighths keep the denominator", "# ?/8", 0.5, "4/8"},
		{"eighths round half up", "# ?/8", 0.0625, "1/8"},
		{"eighths carry", "# ?/8", 0.99, "1"},
		{"sixteenths", "# ??/16", 2.3, "2 5/16"},
		{"hundredths", "0 ?/100", 0.25, "0 25/100"},
		{"improper fixed", "?/4", 2.5, "10/4"},
		{"percent scales", "# ?/?%", 0.015, "1 1/2%"},
		{"huge value", "# ?/?", 1e20, "100000000000000000000"},
		{"huge improper", "?/?", 1e20, "100000000000000000000/1"},
		{"decimal form not binary", "# ?/?", 0.1, "1/9"},
		{"tenth with two digits", "# ??/??", 0.1, "1/10"},
		{"no denominator is not a fraction", "0/", 5, "5/"},
		{"point is not a fraction", "0.0/?", 5, "5.0/?"},
		{"letter in between is not a fraction", "0 x?/?", 5, "5 x?/?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.v, tt.pattern); got != tt.want {
				t.Errorf("Format(%v, %q) = %q, want %q", tt.v, tt.pattern, got, tt.want)
			}
		})
	}
}

// TestBestApproximation checks the continued-fraction search against trying
// every denominator.
func TestBestApproximation(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{0.1, 0.35, 0.5, 0.6180339887, 0.14159265, 0.999, 0.001, 0.3333, 0.285714, 0.123456789} {
		for _, limit := range []int64{1, 9, 99, 999} {
			r := new(big.Rat).SetFloat64(x)
			p, q := bestApproximation(r, big.NewInt(limit))
			got := new(big.Rat).SetFrac(p, q)
			best := math.Inf(1)
			for d := int64(1); d <= limit; d++ {
				n := math.Round(x * float64(d))
				best = min(best, math.Abs(x-n/float64(d)))
			}
			gf, _ := got.Float64()
			if q.Int64() > limit || math.Abs(x-gf) > best+1e-15 {
				t.Errorf("best approximation of %v within %d is %v, off by %g, but %g is possible", x, limit, got, math.Abs(x-gf), best)
			}
		}
	}
}
