package numfmt

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// dateCode is a date or time code of a date section.
type dateCode int

const (
	dYear2          dateCode = iota + 1 // y, yy
	dYear4                              // yyy, yyyy
	dMonth                              // m
	dMonth2                             // mm
	dMonthAbbr                          // mmm: Jan
	dMonthName                          // mmmm: January
	dMonthLetter                        // mmmmm: J
	dDay                                // d
	dDay2                               // dd
	dWeekdayAbbr                        // ddd: Mon
	dWeekday                            // dddd: Monday
	dHour                               // h
	dHour2                              // hh
	dMinute                             // m after h or before s
	dMinute2                            // mm after h or before s
	dSecond                             // s
	dSecond2                            // ss
	dSubsecond                          // .0, .00 or .000 right after seconds
	dAMPM                               // AM/PM
	dAP                                 // A/P
	dElapsedHours                       // [h]
	dElapsedMinutes                     // [m]
	dElapsedSeconds                     // [s]
)

// Excel's serial dates: day 0 is 1899-12-30 as Excel counts from then, and
// the last day it shows is 9999-12-31.
const (
	maxSerial = 2958466 // 10000-01-01
	overflow  = "########"
)

// dateSafe are the literal characters Excel shows without quotes in a date
// section: a comma or a point there is text, not a separator.
const dateSafe = excelSafe + ",."

// parseDate reads s as a date section. It reports false when s is none:
// when it has no date or time code, or has digit placeholders, a percent
// sign or an unquoted ASCII letter that starts no code (so `0 "days"`,
// `#,##0 hours` and `nothing` stay number sections, as they always were).
func parseDate(s string) (section, bool) {
	var ps parser
	codes := 0
	bracket := func(b string) {
		if t, ok := elapsed(b); ok {
			ps.push(t)
			codes++
			return
		}
		ps.bracket(b)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '_' || c == '*' || c == '[':
			i = ps.shared(s, i, bracket)
		case c == '.' && afterSeconds(ps.toks) && ps.litRaw.Len() == 0 && i+1 < len(s) && s[i+1] == '0':
			j := i + 1
			for j < len(s) && s[j] == '0' {
				j++
			}
			if j-i-1 > 3 { // Excel shows at most milliseconds
				return section{}, false
			}
			ps.push(token{kind: tDate, code: dSubsecond, n: j - i - 1, raw: s[i:j]})
			ps.subsec = max(ps.subsec, j-i-1)
			i = j
		case isPlaceholder(c) || c == '%':
			return section{}, false
		case c < utf8.RuneSelf && isLetter(c):
			t, n := dateCodeAt(s[i:])
			if n == 0 {
				return section{}, false
			}
			ps.push(t)
			ps.hour12 = ps.hour12 || t.code == dAMPM || t.code == dAP
			codes++
			i += n
		default:
			j := i + 1
			for j < len(s) && !isLetter(s[j]) && !strings.ContainsRune(`"\_*[.%0#?`, rune(s[j])) {
				j++
			}
			ps.addLit(s[i:j], quoteWith(s[i:j], dateSafe))
			i = j
		}
	}
	if codes == 0 {
		return section{}, false
	}
	ps.flush()
	ps.date = true
	minutes(ps.toks)
	return ps.section, true
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// afterSeconds reports whether the last token is a seconds code.
func afterSeconds(toks []token) bool {
	if len(toks) == 0 || toks[len(toks)-1].kind != tDate {
		return false
	}
	c := toks[len(toks)-1].code
	return c == dSecond || c == dSecond2 || c == dElapsedSeconds
}

// dateCodeAt reads the date or time code at the start of s, in any case,
// and returns its token and length, or a length of 0 for none.
func dateCodeAt(s string) (token, int) {
	switch {
	case len(s) >= 5 && strings.EqualFold(s[:5], "am/pm"):
		return token{kind: tDate, code: dAMPM, raw: s[:5]}, 5
	case len(s) >= 3 && strings.EqualFold(s[:3], "a/p"):
		return token{kind: tDate, code: dAP, raw: s[:3]}, 3
	}
	c := s[0] | 0x20
	n := 1
	for n < len(s) && s[n]|0x20 == c {
		n++
	}
	var code dateCode
	switch c {
	case 'y':
		code = pick(n, dYear2, dYear2, dYear4)
	case 'm':
		code = pick(n, dMonth, dMonth2, dMonthAbbr, dMonthName, dMonthLetter, dMonthName)
	case 'd':
		code = pick(n, dDay, dDay2, dWeekdayAbbr, dWeekday)
	case 'h':
		code = pick(n, dHour, dHour2)
	case 's':
		code = pick(n, dSecond, dSecond2)
	default:
		return token{}, 0
	}
	return token{kind: tDate, code: code, raw: s[:n]}, n
}

// pick returns codes[n-1], or the last code for a longer run.
func pick(n int, codes ...dateCode) dateCode { return codes[min(n, len(codes))-1] }

// elapsed reads the content of an elapsed time bracket: [h], [mm], [ss]...
func elapsed(b string) (token, bool) {
	if b == "" {
		return token{}, false
	}
	c := b[0] | 0x20
	for i := 1; i < len(b); i++ {
		if b[i]|0x20 != c {
			return token{}, false
		}
	}
	var code dateCode
	switch c {
	case 'h':
		code = dElapsedHours
	case 'm':
		code = dElapsedMinutes
	case 's':
		code = dElapsedSeconds
	default:
		return token{}, false
	}
	return token{kind: tDate, code: code, n: len(b), raw: "[" + b + "]"}, true
}

// minutes turns m and mm into minutes, as Excel reads them, when the code
// before them is hours or the code after them seconds.
func minutes(toks []token) {
	var idx []int
	for i, t := range toks {
		if t.kind == tDate {
			idx = append(idx, i)
		}
	}
	for k, i := range idx {
		t := &toks[i]
		if t.code != dMonth && t.code != dMonth2 {
			continue
		}
		hour := k > 0 && isHourCode(toks[idx[k-1]].code)
		second := k+1 < len(idx) && isSecondCode(toks[idx[k+1]].code)
		if hour || second {
			t.code += dMinute - dMonth
		}
	}
}

func isHourCode(c dateCode) bool { return c == dHour || c == dHour2 || c == dElapsedHours }

func isSecondCode(c dateCode) bool {
	return c == dSecond || c == dSecond2 || c == dElapsedSeconds
}

// clock is an Excel serial date taken apart.
type clock struct {
	day                       int // the serial day
	year, day1                int // day1: day of the month
	month                     time.Month
	hour, minute, second, sub int // sub: the subsecond ticks
	hour12                    bool
	subsec                    int // the digits of sub
}

// formatDate writes the serial date v with the date section s: negative
// values, NaN and values from 10000-01-01 on are a run of #, as Excel shows
// them, in whichever section they fall.
func (s *section) formatDate(v float64) string {
	c, ok := newClock(v, s.subsec)
	if !ok {
		return overflow
	}
	c.hour12 = s.hour12
	var b strings.Builder
	for _, t := range s.toks {
		switch t.kind {
		case tDate:
			b.WriteString(c.text(t))
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// newClock takes the serial date v apart, rounded to subsec digits of a
// second; it reports false for a value Excel cannot show.
func newClock(v float64, subsec int) (clock, bool) {
	if !(v >= 0 && v < maxSerial) {
		return clock{}, false
	}
	per := int64(1)
	for range subsec {
		per *= 10
	}
	day := math.Floor(v)
	ticks := int64(math.Round((v - day) * float64(86400*per)))
	if ticks >= 86400*per {
		day++
		ticks -= 86400 * per
	}
	if day >= maxSerial {
		return clock{}, false
	}
	c := clock{day: int(day), sub: int(ticks % per), subsec: subsec}
	secs := int(ticks / per)
	c.hour, c.minute, c.second = secs/3600, secs/60%60, secs%60
	c.year, c.month, c.day1 = civil(c.day)
	return c, true
}

// civil returns the date of an Excel serial day. Before 1900-03-01 it is
// Excel's: day 0 is 1900-01-00, day 1 1900-01-01 and day 60 the 1900-02-29
// Excel keeps for Lotus 1-2-3, so that every serial reads as in Excel.
func civil(day int) (int, time.Month, int) {
	switch {
	case day == 0:
		return 1900, time.January, 0
	case day == 60:
		return 1900, time.February, 29
	case day < 60:
		day++
	}
	t := time.Date(1899, time.December, 30+day, 0, 0, 0, 0, time.UTC)
	return t.Year(), t.Month(), t.Day()
}

// text writes one date or time code.
func (c clock) text(t token) string {
	switch t.code {
	case dYear2:
		return twoDigits(c.year % 100)
	case dYear4:
		return strconv.Itoa(c.year)
	case dMonth, dMonth2, dMonthAbbr, dMonthName, dMonthLetter:
		return c.monthText(t.code)
	case dDay:
		return strconv.Itoa(c.day1)
	case dDay2:
		return twoDigits(c.day1)
	case dWeekdayAbbr:
		return c.weekday().String()[:3]
	case dWeekday:
		return c.weekday().String()
	case dHour, dHour2:
		h := c.hour
		if c.hour12 {
			h = (h+11)%12 + 1
		}
		return digits(h, t.code == dHour2)
	case dMinute, dMinute2:
		return digits(c.minute, t.code == dMinute2)
	case dSecond, dSecond2:
		return digits(c.second, t.code == dSecond2)
	case dSubsecond:
		return "." + zeroPad(strconv.Itoa(c.sub), c.subsec)[:t.n]
	case dAMPM, dAP:
		return c.meridiem(t)
	}
	return c.elapsed(t)
}

func (c clock) monthText(code dateCode) string {
	name := c.month.String()
	switch code {
	case dMonth:
		return strconv.Itoa(int(c.month))
	case dMonth2:
		return twoDigits(int(c.month))
	case dMonthAbbr:
		return name[:3]
	case dMonthLetter:
		return name[:1]
	}
	return name
}

// weekday is the day of the week of the serial day: day 0 is a Saturday.
// Excel counts weekdays so also before March 1900.
func (c clock) weekday() time.Weekday { return time.Weekday((c.day + 6) % 7) }

// meridiem writes AM/PM or A/P as the pattern spells its halves.
func (c clock) meridiem(t token) string {
	am, pm, _ := strings.Cut(t.raw, "/")
	if c.hour < 12 {
		return am
	}
	return pm
}

// elapsed writes [h], [m] or [s]: the hours, minutes or seconds since day 0.
func (c clock) elapsed(t token) string {
	total := int64(c.day)*24 + int64(c.hour)
	if t.code != dElapsedHours {
		total = total*60 + int64(c.minute)
	}
	if t.code == dElapsedSeconds {
		total = total*60 + int64(c.second)
	}
	return zeroPad(strconv.FormatInt(total, 10), t.n)
}

func digits(n int, two bool) string {
	if two {
		return twoDigits(n)
	}
	return strconv.Itoa(n)
}

func twoDigits(n int) string { return zeroPad(strconv.Itoa(n), 2) }

// zeroPad writes s with leading zeros to n characters.
func zeroPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}
