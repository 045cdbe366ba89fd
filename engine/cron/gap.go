package cron

import (
	"math"
	"math/bits"
	"time"
)

// MinGap returns the shortest wall-clock interval between two consecutive fire times of the
// schedule, computed exactly from the fields rather than sampled. The fire times of one day are
// every combination of the hour, minute and second values, so two consecutive fires are either
// adjacent seconds of one minute, the last second of a minute and the first of the next firing
// minute, likewise across hours, or the last fire of a day and the first of the next firing day.
// MinGap is the smallest of these gaps; the gap between firing days is found by walking one
// 400-year cycle of the calendar, after which dates and days of the week repeat.
//
// Real-time intervals can be shorter around a spring-forward clock change (see the package
// documentation). MinGap returns 0 for the zero Schedule.
func (s *Schedule) MinGap() time.Duration {
	days := s.minDayGap()
	if days == 0 {
		return 0
	}
	// Offsets, in seconds, of the first and last fire within a minute, an hour and a day.
	firstInMinute, lastInMinute := lowBit(s.second), highBit(s.second)
	firstInHour := lowBit(s.minute)*60 + firstInMinute
	lastInHour := highBit(s.minute)*60 + lastInMinute
	firstInDay := lowBit(uint64(s.hour))*3600 + firstInHour
	lastInDay := highBit(uint64(s.hour))*3600 + lastInHour

	gap := days*secondsPerDay - (lastInDay - firstInDay)
	if step, ok := minStep(uint64(s.hour)); ok {
		gap = min(gap, step*3600-(lastInHour-firstInHour))
	}
	if step, ok := minStep(s.minute); ok {
		gap = min(gap, step*60-(lastInMinute-firstInMinute))
	}
	if step, ok := minStep(s.second); ok {
		gap = min(gap, step)
	}
	return time.Duration(gap) * time.Second
}

// minDayGap returns the fewest days between two consecutive days on which the schedule fires,
// or 0 if it fires on no day. Dates and their days of the week repeat every 146097 days (400
// years, a whole number of weeks), so one cycle of consecutive firing days holds every gap.
func (s *Schedule) minDayGap() int64 {
	const cycle = 146097
	start := daysSinceEpoch(2000, 1, 1)
	prev, ok := s.nextDay(start)
	if !ok {
		return 0
	}
	best := int64(math.MaxInt64)
	for prev < start+cycle && best > 1 {
		day, _ := s.nextDay(prev + 1) // a schedule that fired once fires again within a cycle
		best = min(best, day-prev)
		prev = day
	}
	return best
}

// nextDay returns the first day, counted from 1970-01-01, on or after day on which the
// schedule fires.
func (s *Schedule) nextDay(day int64) (int64, bool) {
	y, m, d := civil(day)
	y, m, d, ok := s.nextDate(y, m, d, y+searchYears)
	if !ok {
		return 0, false
	}
	return daysSinceEpoch(y, m, d), true
}

// minStep returns the smallest difference between two adjacent values of mask, and false if
// mask holds fewer than two values.
func minStep(mask uint64) (int64, bool) {
	if bits.OnesCount64(mask) < 2 {
		return 0, false
	}
	best := 64
	prev := bits.TrailingZeros64(mask)
	for m := mask & (mask - 1); m != 0; m &= m - 1 {
		v := bits.TrailingZeros64(m)
		best = min(best, v-prev)
		prev = v
	}
	return int64(best), true
}

func lowBit(mask uint64) int64  { return int64(bits.TrailingZeros64(mask)) }
func highBit(mask uint64) int64 { return int64(63 - bits.LeadingZeros64(mask)) }
