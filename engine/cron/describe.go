package cron

import (
	"math/bits"
	"strconv"
	"strings"
)

// maxDescription bounds the length in bytes of a description. The field-by-field form with
// compact lists stays within it for every schedule (see TestDescribeWorstCaseLength); a readable
// form that would be longer gives way to the field-by-field form.
const maxDescription = 400

const (
	// maxListedTimes is the most times of day a description lists one by one ("At 08:00,
	// 08:30 and 17:00").
	maxListedTimes = 6
	// maxIrregular is the most values of an irregular minute or second list that a readable
	// form spells out; longer ones are described field by field.
	maxIrregular = 8
	// maxSpelled is the most values of an even progression that prose spells out; longer ones
	// are written "1, 3, 5, …, 31".
	maxSpelled = 6
)

// Masks of whole fields.
var (
	allMinutes = bitRange(0, 59)
	allHours   = bitRange(0, 23)
	allDom     = bitRange(1, 31)
	allMonths  = bitRange(1, 12)
	allDow     = bitRange(0, 6)
)

// Describe says in English when expr fires, for people: "Every minute", "Every 5 minutes",
// "At 08:00 on Monday to Friday", "At 08:00, 08:30, 17:00 and 17:30 every day", "Every hour at
// minute 15", "At 09:00 on day 1 of the month", "At 00:00 on 1 January", "Every 10 seconds",
// "Every 15 minutes from 09:00 to 17:45 on Monday to Friday", ... Times are wall-clock times in
// 24-hour HH:MM, or HH:MM:SS when the second is not 0. When both day-of-month and day-of-week
// are restricted, the words say that a day must match both, as Next does ("on day 13 of the
// month if it falls on Friday", "on the first Monday of the month"). Schedules too irregular
// for such phrases are described field by field ("At second 0, minutes 0-10,20,40, every hour,
// every day"). The description is never empty and at most 400 bytes long.
//
// An expression that Parse refuses gives Parse's error and an empty description.
func Describe(expr string) (string, error) {
	s, err := Parse(expr)
	if err != nil {
		return "", err
	}
	return s.describe(), nil
}

// describe returns the readable form if the schedule has one that fits, else the field-by-field
// form, with compact day lists if the prose ones would not fit.
func (s *Schedule) describe() string {
	if t, at, ok := s.timePhrase(); ok {
		if d := joinWords(t, s.datePhrase(prose, at)); len(d) <= maxDescription {
			return d
		}
	}
	if d := s.fieldPhrase(prose); len(d) <= maxDescription {
		return d
	}
	return s.fieldPhrase(compact)
}

// fieldPhrase describes the time fields one by one with compact lists, then the days in the
// given style.
func (s *Schedule) fieldPhrase(dateStyle style) string {
	return "At " + fieldPart(s.second, 0, 59, "second") +
		", " + fieldPart(s.minute, 0, 59, "minute") +
		", " + fieldPart(uint64(s.hour), 0, 23, "hour") +
		", " + s.datePhrase(dateStyle, true)
}

// fieldPart describes one time field: "every minute", "minute 5", "minutes 3,7,11" or "every
// minute except 5,10", whichever is shortest.
func fieldPart(mask uint64, lo, hi int, unit string) string {
	whole := bitRange(lo, hi)
	switch {
	case mask == whole:
		return "every " + unit
	case count(mask) == 1:
		return unit + " " + strconv.Itoa(low(mask))
	}
	in := unit + "s " + listText(mask, nil, compact, "")
	out := "every " + unit + " except " + listText(whole&^mask, nil, compact, "")
	if len(out) < len(in) {
		return out
	}
	return in
}

// timePhrase describes the times of day at which the schedule fires. at reports a phrase that
// names fixed times ("At 08:00") and so needs "every day" when the days are not restricted.
// ok is false when the times have no readable form.
func (s *Schedule) timePhrase() (phrase string, at, ok bool) {
	if count(s.second)*count(s.minute)*count(uint64(s.hour)) <= maxListedTimes {
		return "At " + s.timeList(), true, true
	}
	if p, q0, ok := s.hourCycle(); ok {
		return s.periodic(p, q0)
	}
	if count(s.second) == 1 {
		return s.minutesPhrase()
	}
	if s.minute == allMinutes && uint64(s.hour) == allHours {
		return secondsPhrase(s.second)
	}
	return "", false, false
}

// timeList lists every time of day the schedule names, in order.
func (s *Schedule) timeList() string {
	var times []string
	for _, h := range values(uint64(s.hour)) {
		for _, m := range values(s.minute) {
			for _, sec := range values(s.second) {
				times = append(times, clock(h, m, sec))
			}
		}
	}
	return joinProse(times, "and")
}

// hourCycle reports whether the fires within an hour, at the offsets 60*minute+second, are p
// seconds apart all round the hour, the last one p seconds before the first of the next hour;
// q0 is the first offset. One offset alone is taken as p = 3600. These are the schedules that,
// within their hours, fire every p seconds.
func (s *Schedule) hourCycle() (p, q0 int, ok bool) {
	if count(s.second) == 1 {
		if m0, k, ok := cycle(s.minute, 60); ok {
			return 60 * k, 60*m0 + low(s.second), true
		}
		return 0, 0, false
	}
	// With two or more seconds in a minute the spacing is under a minute, so every minute
	// must fire.
	if s.minute == allMinutes {
		if s0, j, ok := cycle(s.second, 60); ok {
			return j, s0, true
		}
	}
	return 0, 0, false
}

// periodic describes a schedule that fires every p seconds within its hours, starting at
// offset q0 into each of them (see hourCycle).
func (s *Schedule) periodic(p, q0 int) (phrase string, at, ok bool) {
	hours := uint64(s.hour)
	every := everyPhrase(p)
	if hours == allHours {
		return every + offsetPhrase(p, q0), false, true
	}
	last := q0 + 3600 - p // offset of the last fire in an hour
	if runs := runsOf(hours); len(runs) <= 2 && (p < 3600 || longRuns(runs)) {
		var b strings.Builder
		b.WriteString(every)
		for i, r := range runs {
			if i > 0 {
				b.WriteString(" and")
			}
			b.WriteString(" from " + clockAt(r.lo, q0) + " to " + clockAt(r.hi, last))
		}
		return b.String(), false, true
	}
	if p < 3600 {
		return every + offsetPhrase(p, q0) + " during hours " + listText(hours, nil, prose, "and"), false, true
	}
	if h0, n, hl, ok := progressionOf(hours); ok {
		if h0 == 0 && q0 == 0 && hl == 24-n {
			return everyPhrase(n * 3600), false, true
		}
		return everyPhrase(n*3600) + " from " + clockAt(h0, q0) + " to " + clockAt(hl, q0), false, true
	}
	return "At " + minuteSecond(q0) + " of hours " + listText(hours, nil, prose, "and"), true, true
}

// offsetPhrase says where in each hour a schedule firing every p seconds from offset q0 fires,
// or "" if q0 is 0, the start of the hour.
func offsetPhrase(p, q0 int) string {
	switch {
	case q0 == 0:
		return ""
	case p == 3600:
		return " at " + minuteSecond(q0)
	case p == 60:
		return " at second " + strconv.Itoa(q0)
	case p < 60:
		return ", at " + listText(stepMask(q0, p, 59), nil, prose, "and") + " seconds past the minute"
	}
	m0, s0 := q0/60, q0%60
	if m0 == 0 {
		return " at second " + strconv.Itoa(s0)
	}
	minutes := listText(stepMask(m0, p/60, 59), nil, prose, "and")
	if s0 == 0 {
		return ", at " + minutes + " minutes past the hour"
	}
	return ", at " + minutes + " minutes and " + strconv.Itoa(s0) + " seconds past the hour"
}

// minutesPhrase describes a schedule that fires at one second of each of its minutes, when the
// minutes are not evenly spaced all round the hour.
func (s *Schedule) minutesPhrase() (phrase string, at, ok bool) {
	s0 := low(s.second)
	hours := uint64(s.hour)
	if m0, k, ml, ok := progressionOf(s.minute); ok && count(s.minute) > maxSpelled {
		every := everyPhrase(60 * k)
		if count(hours) == 1 {
			h := low(hours)
			return every + " from " + clock(h, m0, s0) + " to " + clock(h, ml, s0), false, true
		}
		phrase = every + " from " + strconv.Itoa(m0) + " to " + strconv.Itoa(ml) + " minutes past the hour"
		if s0 != 0 {
			phrase += ", at second " + strconv.Itoa(s0)
		}
		if hours != allHours {
			phrase += " during hours " + listText(hours, nil, prose, "and")
		}
		return phrase, false, true
	}
	if s0 != 0 || count(s.minute) > maxIrregular {
		return "", false, false
	}
	minutes := listText(s.minute, nil, prose, "and")
	switch {
	case hours == allHours:
		return "Every hour at minutes " + minutes, false, true
	case count(hours) == 1:
		return "At minutes " + minutes + " of hour " + strconv.Itoa(low(hours)), true, true
	}
	return "At minutes " + minutes + " of hours " + listText(hours, nil, prose, "and"), true, true
}

// secondsPhrase describes a schedule that fires every minute at the given seconds, when they
// are not evenly spaced all round the minute.
func secondsPhrase(sec uint64) (phrase string, at, ok bool) {
	if s0, j, sl, ok := progressionOf(sec); ok && count(sec) > maxSpelled {
		return everyPhrase(j) + " from " + strconv.Itoa(s0) + " to " + strconv.Itoa(sl) +
			" seconds past the minute", false, true
	}
	if count(sec) > maxIrregular {
		return "", false, false
	}
	return "Every minute at seconds " + listText(sec, nil, prose, "and"), false, true
}

// everyPhrase says "Every 15 minutes" for an interval of p seconds.
func everyPhrase(p int) string {
	n, unit := p, "second"
	switch {
	case p%3600 == 0:
		n, unit = p/3600, "hour"
	case p%60 == 0:
		n, unit = p/60, "minute"
	}
	if n == 1 {
		return "Every " + unit
	}
	return "Every " + strconv.Itoa(n) + " " + unit + "s"
}

// minuteSecond says "minute 15" or "minute 15, second 30" for an offset into the hour.
func minuteSecond(q int) string {
	if q%60 == 0 {
		return "minute " + strconv.Itoa(q/60)
	}
	return "minute " + strconv.Itoa(q/60) + ", second " + strconv.Itoa(q%60)
}

// clockAt formats the time q seconds into hour h.
func clockAt(h, q int) string { return clock(h, q/60, q%60) }

// clock formats a time of day as HH:MM, or HH:MM:SS when sec is not 0.
func clock(h, m, sec int) string {
	b := make([]byte, 0, 8)
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
	if sec != 0 {
		b = append(b, ':', byte('0'+sec/10), byte('0'+sec%10))
	}
	return string(b)
}

// joinWords joins two phrases with a space, leaving out an empty one.
func joinWords(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " " + b
}

// count returns the number of values in mask.
func count(mask uint64) int { return bits.OnesCount64(mask) }

// low returns the smallest value in mask.
func low(mask uint64) int { return bits.TrailingZeros64(mask) }

// values returns the values in mask in increasing order.
func values(mask uint64) []int {
	vs := make([]int, 0, count(mask))
	for m := mask; m != 0; m &= m - 1 {
		vs = append(vs, bits.TrailingZeros64(m))
	}
	return vs
}

// progressionOf reports whether mask holds two or more values spaced evenly, step apart.
func progressionOf(mask uint64) (first, step, last int, ok bool) {
	if count(mask) < 2 {
		return 0, 0, 0, false
	}
	first = low(mask)
	last = 63 - bits.LeadingZeros64(mask)
	step = low(mask&^(1<<first)) - first
	return first, step, last, stepMask(first, step, last) == mask
}

// cycle reports whether the values of mask, within a field of size values starting at 0, are
// evenly spaced all round the field: the gap from the last value to the first one of the next
// round equals the step. A single value is a cycle with step size.
func cycle(mask uint64, size int) (first, step int, ok bool) {
	if count(mask) == 1 {
		return low(mask), size, true
	}
	first, step, last, ok := progressionOf(mask)
	if !ok || first >= step || last != first+size-step {
		return 0, 0, false
	}
	return first, step, true
}

// stepMask returns the mask of first, first+step, ... up to last.
func stepMask(first, step, last int) uint64 {
	var m uint64
	for v := first; v <= last; v += step {
		m |= 1 << v
	}
	return m
}

// run is a maximal stretch of consecutive values in a mask.
type run struct{ lo, hi int }

// runsOf returns the runs of mask in increasing order.
func runsOf(mask uint64) []run {
	var runs []run
	for m := mask; m != 0; {
		lo := bits.TrailingZeros64(m)
		hi := lo + bits.TrailingZeros64(^(m >> lo)) - 1
		m &^= bitRange(lo, hi)
		runs = append(runs, run{lo, hi})
	}
	return runs
}

// longRuns reports whether every run holds two or more values.
func longRuns(runs []run) bool {
	for _, r := range runs {
		if r.hi == r.lo {
			return false
		}
	}
	return true
}

// style chooses how lists are written: prose ("1, 3 and 5 to 9", "Monday to Friday") or compact
// ("1,3,5-9", "Mon-Fri").
type style int

const (
	prose style = iota
	compact
)

var (
	dayNames   = [8]string{"", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	dayAbbrevs = [8]string{"", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	ordinals   = [6]string{"", "first", "second", "third", "fourth", "fifth"}
)

// dayName names day i of the week, Monday being 1 and Sunday 7.
func dayName(i int, st style) string {
	if st == compact {
		return dayAbbrevs[i]
	}
	return dayNames[i]
}

// monthName names month i, January being 1.
func monthName(i int, st style) string {
	if st == compact {
		return monthNames[i][:3]
	}
	return monthNames[i]
}

// datePhrase describes the days on which the schedule fires: "on Monday to Friday", "on day 1
// of the month in January to March", "" when it fires every day. at asks for "every day" in
// place of "" (and before "in January") to follow a fixed time.
func (s *Schedule) datePhrase(st style, at bool) string {
	dom, month := uint64(s.dom), uint64(s.month)
	dowAll := uint64(s.dow) == allDow
	of, inMonths := "the month", month != allMonths
	if count(month) == 1 && dom != allDom {
		of, inMonths = monthName(low(month), st), false // "of January"
	}
	var phrase string
	switch {
	case dom == allDom && dowAll:
		if at {
			phrase = "every day"
		}
	case dom == allDom:
		phrase = "on " + s.dowList(st, "and")
	case dowAll && count(dom) == 1 && count(month) == 1:
		phrase = "on " + strconv.Itoa(low(dom)) + " " + monthName(low(month), st) // "on 1 January"
	case dowAll:
		phrase = "on " + daysOfMonth(dom, st) + " of " + of
	default:
		var usedOf bool
		phrase, usedOf = s.bothDays(st, of)
		inMonths = month != allMonths && (!usedOf || count(month) > 1)
	}
	if inMonths {
		phrase = joinWords(phrase, "in "+listText(month, func(i int) string { return monthName(i, st) }, st, "and"))
	}
	return phrase
}

// bothDays describes days that must match both the day-of-month and the day-of-week field,
// within the month or months named by of. usedOf reports whether the phrase names of.
func (s *Schedule) bothDays(st style, of string) (phrase string, usedOf bool) {
	dom := uint64(s.dom)
	if count(uint64(s.dow)) == 1 {
		day := dayName(low(mondayFirst(uint64(s.dow))), st)
		// Days 1-7 of a month hold one of each day of the week, as do days 8-14 and so on.
		for n := 1; n <= 5; n++ {
			if dom == bitRange(7*n-6, min(7*n, 31)) {
				return "on the " + ordinals[n] + " " + day + " of " + of, true
			}
		}
		if count(dom) == 1 {
			return "on " + day + " the " + ordinal(low(dom)), false // "on Friday the 13th"
		}
	}
	if count(dom) == 1 {
		return "on day " + strconv.Itoa(low(dom)) + " of " + of + " if it falls on " + s.dowList(st, "or"), true
	}
	return "on " + daysOfMonth(dom, st) + " of " + of + " that fall on " + s.dowList(st, "or"), true
}

// dowList lists the days of the week, Monday first.
func (s *Schedule) dowList(st style, conj string) string {
	return listText(mondayFirst(uint64(s.dow)), func(i int) string { return dayName(i, st) }, st, conj)
}

// mondayFirst renumbers a day-of-week mask so that Monday is 1 and Sunday 7.
func mondayFirst(dow uint64) uint64 { return dow&^1 | (dow&1)<<7 }

// daysOfMonth says "day 13" or "days 1 to 7".
func daysOfMonth(dom uint64, st style) string {
	if count(dom) == 1 {
		return "day " + strconv.Itoa(low(dom))
	}
	return "days " + listText(dom, nil, st, "and")
}

// ordinal writes 13 as "13th".
func ordinal(n int) string {
	suffix := "th"
	if n/10 != 1 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// listText writes the values of mask, naming them with name (numbers if nil). Prose joins the
// items with commas and conj ("1, 5 and 9"), writes runs of three or more as "a to b" and an
// even progression of more than six values as "1, 3, 5, …, 31". Compact style writes "1,5,9",
// "a-b" and "1,3,5,…,31", whichever of the last two is shorter.
func listText(mask uint64, name func(int) string, st style, conj string) string {
	if name == nil {
		name = strconv.Itoa
	}
	runs := listRuns(mask, name, st, conj)
	first, step, last, isProg := progressionOf(mask)
	isProg = isProg && step > 1 && count(mask) > 3
	if st == compact {
		if isProg {
			if p := name(first) + "," + name(first+step) + "," + name(first+2*step) + ",…," + name(last); len(p) < len(runs) {
				return p
			}
		}
		return runs
	}
	if isProg && count(mask) > maxSpelled {
		return name(first) + ", " + name(first+step) + ", " + name(first+2*step) + ", …, " + name(last)
	}
	return runs
}

// listRuns writes the values of mask as a list of single values and runs (see listText).
func listRuns(mask uint64, name func(int) string, st style, conj string) string {
	sep, to := ",", "-"
	if st == prose {
		sep, to = ", ", " to "
	}
	var items []string
	for _, r := range runsOf(mask) {
		switch {
		case r.hi-r.lo >= 2:
			items = append(items, name(r.lo)+to+name(r.hi))
		case r.hi > r.lo:
			items = append(items, name(r.lo), name(r.hi))
		default:
			items = append(items, name(r.lo))
		}
	}
	if st == compact {
		return strings.Join(items, sep)
	}
	return joinProse(items, conj)
}

// joinProse joins items as "a", "a and b" or "a, b and c", with conj in place of "and".
func joinProse(items []string, conj string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}
