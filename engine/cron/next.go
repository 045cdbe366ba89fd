package cron

import "time"

const (
	secondsPerDay = 86400

	// searchYears bounds the search for the next fire time. A parsed schedule fires within
	// about 40 years (February 29 on a given day of the week), so the bound matters only for
	// the zero Schedule; 401 years holds a whole Gregorian cycle.
	searchYears = 401

	// maxOffset exceeds the largest UTC offset of any zone, past or present: no instant more
	// than this before a wall-clock time can show that time.
	maxOffset = 26 * 3600
)

// Next returns the first fire time strictly after the instant after, reading the schedule as wall-clock
// time in loc (UTC if loc is nil). Times skipped or repeated by daylight saving changes are
// handled as the package documentation describes. Next returns the zero Time only if nothing
// fires within 400 years, which does not happen for a schedule returned by Parse.
func (s *Schedule) Next(after time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	a := after.Unix() // whole seconds: fire times have no fraction
	_, off := after.In(loc).Zone()
	from := a + int64(off) + 1 // the wall-clock second after the one showing at after
	for {
		w, ok := s.next(wallAt(from))
		if !ok {
			return time.Time{}
		}
		u := w.unix()
		t := resolve(u, loc)
		if t.Unix() > a {
			return t
		}
		// u repeats: its first occurrence t has passed and after lies in the repeat. So have
		// the first occurrences of all readings the clock showed before t's offset ended:
		// continue from the first reading past them.
		_, off := t.Zone()
		from = u + 1
		if end, ok := zoneEnd(t); ok {
			from = max(from, end+int64(off))
		}
	}
}

// resolve returns the first instant at which the clock in loc shows the wall-clock time u or a
// later one: the time itself, its first occurrence if it repeats, or the end of the jump that
// skips it.
func resolve(u int64, loc *time.Location) time.Time {
	if loc == time.UTC {
		return time.Unix(u, 0).UTC()
	}
	// Walk the zone's offset periods from an instant that is surely early enough. Within one
	// period the clock shows x+offset at instant x, so the first instant of the period at or
	// after x showing u or later is max(x, u-offset).
	x := u - maxOffset
	for {
		t := time.Unix(x, 0).In(loc)
		_, off := t.Zone()
		c := max(x, u-int64(off))
		end, ok := zoneEnd(t)
		if !ok || c < end {
			return time.Unix(c, 0).In(loc)
		}
		x = end
	}
}

// zoneEnd returns the instant, after t, at which t's UTC offset stops being in effect, and
// false if it never does. The instant may be earlier than the next change of offset, never later.
func zoneEnd(t time.Time) (int64, bool) {
	_, end := t.ZoneBounds()
	if end.IsZero() {
		return 0, false
	}
	x := t.Unix()
	if e := end.Unix(); e > x {
		return e, true
	}
	// ZoneBounds can report an end before t on the last day of a leap year that a zone's
	// footer rule governs (golang/go#81583). Look for a change within the next day instead.
	loc := t.Location()
	_, off := t.Zone()
	lo, hi := x, x+secondsPerDay
	if offsetAt(hi, loc) == off {
		return hi, true
	}
	for hi-lo > 1 { // off holds at lo and not at hi
		mid := lo + (hi-lo)/2
		if offsetAt(mid, loc) == off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, true
}

func offsetAt(x int64, loc *time.Location) int {
	_, off := time.Unix(x, 0).In(loc).Zone()
	return off
}

// next returns the earliest wall-clock time at or after w that the schedule names.
func (s *Schedule) next(w wall) (wall, bool) {
	limit := w.year + searchYears
	for {
		y, m, d, ok := s.nextDate(w.year, w.month, w.day, limit)
		if !ok {
			return wall{}, false
		}
		if y != w.year || m != w.month || d != w.day {
			w = wall{year: y, month: m, day: d}
		}
		h := nextBit(uint64(s.hour), w.hour)
		if h > 23 {
			w = wall{year: w.year, month: w.month, day: w.day + 1}
			continue
		}
		if h != w.hour {
			w.hour, w.minute, w.second = h, 0, 0
		}
		mi := nextBit(s.minute, w.minute)
		if mi > 59 {
			w.hour, w.minute, w.second = w.hour+1, 0, 0
			continue
		}
		if mi != w.minute {
			w.minute, w.second = mi, 0
		}
		sec := nextBit(s.second, w.second)
		if sec > 59 {
			w.minute, w.second = w.minute+1, 0
			continue
		}
		w.second = sec
		return w, true
	}
}

// nextDate returns the first date on or after year-month-day (day may run past the end of the
// month) on which the schedule fires, looking no further than the end of limitYear.
func (s *Schedule) nextDate(year, month, day, limitYear int) (y, m, d int, ok bool) {
	for year <= limitYear {
		if s.month&(1<<month) == 0 {
			next := nextBit(uint64(s.month), month)
			if next > 12 {
				year, month, day = year+1, 1, 1
				continue
			}
			month, day = next, 1
		}
		if d := nextBit(s.days(year, month), day); d <= 31 {
			return year, month, d, true
		}
		month, day = month+1, 1
		if month > 12 {
			year, month = year+1, 1
		}
	}
	return 0, 0, 0, false
}

// days returns the mask of the days of the month on which the schedule fires, with both
// day-of-month and day-of-week matching.
func (s *Schedule) days(year, month int) uint64 {
	mask := uint64(s.dom) & daysThrough(daysIn(year, month))
	if s.dow == 0x7f || mask == 0 {
		return mask
	}
	// Day d of the month falls on weekday (first+d-1)%7. Rotate the weekday mask so that bit j
	// stands for day j+1, repeat it every 7 days and shift it to day numbering.
	first := weekday(daysSinceEpoch(year, month, 1))
	dow := uint64(s.dow)
	r := (dow>>first | dow<<(7-first)) & 0x7f
	byDay := (r | r<<7 | r<<14 | r<<21 | r<<28) << 1
	return mask & byDay
}

// A wall is a wall-clock reading: a date and a time of day, in no zone.
type wall struct {
	year                             int
	month, day, hour, minute, second int
}

// wallAt returns the wall-clock reading u seconds after 1970-01-01 00:00:00.
func wallAt(u int64) wall {
	days := floorDiv(u, secondsPerDay)
	sec := int(u - days*secondsPerDay)
	y, m, d := civil(days)
	return wall{year: y, month: m, day: d, hour: sec / 3600, minute: sec / 60 % 60, second: sec % 60}
}

// unix returns the reading as seconds after 1970-01-01 00:00:00.
func (w wall) unix() int64 {
	return daysSinceEpoch(w.year, w.month, w.day)*secondsPerDay +
		int64(w.hour*3600+w.minute*60+w.second)
}

// daysSinceEpoch returns the number of days from 1970-01-01 to the given date of the proleptic
// Gregorian calendar (the algorithm of Howard Hinnant's "chrono-compatible low-level date
// algorithms").
func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400                               // [0, 399]
	doy := int64((153*((month+9)%12)+2)/5 + day - 1) // [0, 365], from March 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy           // [0, 146096]
	return era*146097 + doe - 719468
}

// civil is the inverse of daysSinceEpoch.
func civil(days int64) (year, month, day int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	y := yoe + era*400
	if month <= 2 {
		y++
	}
	return int(y), month, day
}

// weekday returns the day of the week of a day counted from 1970-01-01, Sunday being 0.
func weekday(days int64) int {
	return int(days - floorDiv(days+4, 7)*7 + 4) // 1970-01-01 was a Thursday
}

func daysIn(year, month int) int {
	if month == 2 && !isLeap(year) {
		return 28
	}
	return maxDays[month]
}

func isLeap(year int) bool {
	return year%4 == 0 && (year%100 != 0 || year%400 == 0)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
