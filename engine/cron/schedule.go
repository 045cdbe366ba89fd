package cron

import (
	"math/bits"
	"strconv"
)

// Schedule is a parsed cron expression: one bit mask per field. The zero Schedule never fires;
// obtain schedules from Parse. A Schedule is immutable and safe for concurrent use, and two
// schedules that fire at the same times compare equal with ==.
type Schedule struct {
	second uint64 // bits 0-59
	minute uint64 // bits 0-59
	hour   uint32 // bits 0-23
	dom    uint32 // bits 1-31
	month  uint16 // bits 1-12
	dow    uint8  // bits 0-6, Sunday is 0
}

// String returns the expression in a normal form that parses to an equal Schedule: `*` for a
// whole field, steps where a field is an arithmetic progression, and numbers instead of names.
func (s *Schedule) String() string {
	b := make([]byte, 0, 32)
	b = formatField(b, s.second, 0, 59, true)
	b = append(b, ' ')
	b = formatField(b, s.minute, 0, 59, true)
	b = append(b, ' ')
	b = formatField(b, uint64(s.hour), 0, 23, true)
	b = append(b, ' ')
	b = formatField(b, uint64(s.dom), 1, 31, true)
	b = append(b, ' ')
	b = formatField(b, uint64(s.month), 1, 12, true)
	b = append(b, ' ')
	// Steps are left out here: a day-of-week step counts from Monday, which would surprise.
	b = formatField(b, uint64(s.dow), 0, 6, false)
	return string(b)
}

// formatField appends the values of mask, which lie within lo..hi.
func formatField(b []byte, mask uint64, lo, hi int, steps bool) []byte {
	if mask == bitRange(lo, hi) {
		return append(b, '*')
	}
	if steps {
		if first, last, step, ok := progression(mask); ok {
			switch {
			case last+step > hi && first == lo:
				b = append(b, '*')
			case last+step > hi:
				b = strconv.AppendInt(b, int64(first), 10)
			default:
				b = strconv.AppendInt(b, int64(first), 10)
				b = append(b, '-')
				b = strconv.AppendInt(b, int64(last), 10)
			}
			b = append(b, '/')
			return strconv.AppendInt(b, int64(step), 10)
		}
	}
	sep := false
	for m := mask; m != 0; {
		start := bits.TrailingZeros64(m)
		end := start + bits.TrailingZeros64(^(m >> start)) - 1 // last value of the run
		m &^= bitRange(start, end)
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = strconv.AppendInt(b, int64(start), 10)
		switch {
		case end-start >= 2:
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(end), 10)
		case end > start:
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(end), 10)
		}
	}
	return b
}

// progression reports whether mask holds three or more values spaced evenly by more than one.
func progression(mask uint64) (first, last, step int, ok bool) {
	if bits.OnesCount64(mask) < 3 {
		return 0, 0, 0, false
	}
	first = bits.TrailingZeros64(mask)
	last = 63 - bits.LeadingZeros64(mask)
	rest := mask &^ (1 << first)
	step = bits.TrailingZeros64(rest) - first
	if step < 2 {
		return 0, 0, 0, false
	}
	var want uint64
	for v := first; v <= last; v += step {
		want |= 1 << v
	}
	return first, last, step, want == mask
}

// bitRange returns the mask with bits lo through hi set.
func bitRange(lo, hi int) uint64 {
	return (^uint64(0) >> (63 - hi)) &^ (1<<lo - 1)
}

// nextBit returns the lowest set bit of mask at or above from, or 64 if there is none.
func nextBit(mask uint64, from int) int {
	if from >= 64 {
		return 64
	}
	return bits.TrailingZeros64(mask & (^uint64(0) << from))
}
