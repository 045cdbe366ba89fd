package channels

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Fact is one value a run's condition saw, as a card lists it.
type Fact struct {
	Metric string // the metric's URI
	Value  string // the value written plainly, or "no value"
}

// MaxFacts bounds the facts Facts returns.
const MaxFacts = 20

// Facts lists the values of s by metric URI, in the URIs' order, at most
// MaxFacts: numbers written plainly (integers without decimals, others with
// at most six), since the metrics' number formats are not in the message.
func (s Source) Facts() []Fact {
	uris := make([]string, 0, len(s.Values))
	for uri := range s.Values {
		uris = append(uris, uri)
	}
	slices.Sort(uris)
	out := make([]Fact, 0, min(len(uris), MaxFacts))
	for _, uri := range uris[:min(len(uris), MaxFacts)] {
		v := "no value"
		if p := s.Values[uri]; p != nil {
			v = PlainNumber(*p)
		}
		out = append(out, Fact{Metric: uri, Value: v})
	}
	return out
}

// PlainNumber writes f without a number format: an integer without
// decimals, another number rounded to six decimals with trailing zeros
// trimmed, NaN and infinities by name.
func PlainNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'f', 6, 64)
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// More says how many more of noun there are: "1 more row", "1,234 more rows".
func More(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	digits := strconv.Itoa(n)
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && d != '-' && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String() + " more " + noun
}
