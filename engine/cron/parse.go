package cron

import (
	"fmt"
	"strconv"
	"strings"
)

// Error reports why an expression is not a valid schedule.
type Error struct {
	// Field names the offending field: "second", "minute", "hour", "day-of-month", "month" or
	// "day-of-week"; it is empty when the problem concerns the expression as a whole.
	Field string
	// Msg says what is wrong, without the field name.
	Msg string
}

// Error returns Msg, prefixed with the field name when there is one.
func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// field describes the values one field of an expression accepts.
type field struct {
	name     string
	min, max int
	names    []string // names[i] stands for the value i+nameBase
	nameBase int
}

const (
	fSecond = iota
	fMinute
	fHour
	fDayOfMonth
	fMonth
	fDayOfWeek
	fieldCount
)

var fields = [fieldCount]field{
	fSecond:     {name: "second", min: 0, max: 59},
	fMinute:     {name: "minute", min: 0, max: 59},
	fHour:       {name: "hour", min: 0, max: 23},
	fDayOfMonth: {name: "day-of-month", min: 1, max: 31},
	fMonth: {name: "month", min: 1, max: 12, nameBase: 1, names: []string{
		"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	// As in Spring, a day name stands for 1-7 with Sunday as 7; see dayOfWeekRange.
	fDayOfWeek: {name: "day-of-week", min: 0, max: 7, nameBase: 1, names: []string{
		"MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"}},
}

// Parse parses a six-field Spring cron expression (see the package documentation). It returns
// an *Error when the expression is malformed or names no date that exists.
func Parse(expr string) (*Schedule, error) {
	var parts [fieldCount]string
	n := 0
	for part := range strings.FieldsSeq(expr) {
		if n < fieldCount {
			parts[n] = part
		}
		n++
	}
	if n != fieldCount {
		return nil, &Error{Msg: fmt.Sprintf(
			"cron expression must have 6 fields (second minute hour day-of-month month day-of-week), got %d", n)}
	}
	var masks [fieldCount]uint64
	for i, part := range parts {
		m, err := parseField(part, i)
		if err != nil {
			return nil, err
		}
		masks[i] = m
	}
	dow := masks[fDayOfWeek]
	if dow&(1<<7) != 0 { // 7 is Sunday, like 0
		dow = dow&^(1<<7) | 1
	}
	s := &Schedule{
		second: masks[fSecond],
		minute: masks[fMinute],
		hour:   uint32(masks[fHour]),
		dom:    uint32(masks[fDayOfMonth]),
		month:  uint16(masks[fMonth]),
		dow:    uint8(dow),
	}
	if err := s.checkDates(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseField returns the set of values of field number fi as a bit mask.
func parseField(text string, fi int) (uint64, *Error) {
	f := &fields[fi]
	var mask uint64
	for rest := text; ; {
		item, tail, more := strings.Cut(rest, ",")
		if item == "" {
			return 0, f.errorf("empty item in list %q", text)
		}
		m, err := f.parseItem(item, fi)
		if err != nil {
			return 0, err
		}
		mask |= m
		if !more {
			return mask, nil
		}
		rest = tail
	}
}

// parseItem parses one list item: a range or value with an optional step.
func (f *field) parseItem(item string, fi int) (uint64, *Error) {
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		var err *Error
		if step, err = f.parseStep(item, stepText); err != nil {
			return 0, err
		}
	}
	var lo, hi int
	switch {
	case rng == "":
		return 0, f.errorf("%q is missing a value before '/'", item)
	case rng == "*" || rng == "?":
		if rng == "?" && fi != fDayOfMonth && fi != fDayOfWeek {
			return 0, f.errorf("'?' is only allowed in day-of-month and day-of-week")
		}
		lo, hi = f.min, f.max
		if fi == fDayOfWeek {
			lo = 1 // Spring counts a day-of-week `*/n` from Monday
		}
	case strings.Contains(rng, "-"):
		var err *Error
		if lo, hi, err = f.parseRange(rng, fi); err != nil {
			return 0, err
		}
	default:
		v, err := f.parseValue(rng)
		if err != nil {
			return 0, err
		}
		lo, hi = v, v
		if hasStep {
			hi = f.max
		}
	}
	var mask uint64
	for v := lo; v <= hi; v += step {
		mask |= 1 << v
	}
	return mask, nil
}

func (f *field) parseStep(item, text string) (int, *Error) {
	if text == "" {
		return 0, f.errorf("%q is missing a step after '/'", item)
	}
	if !isDigits(text) {
		return 0, f.errorf("step %q in %q is not a number", text, item)
	}
	if len(text) > 4 { // beyond any field's span: only the first value is set
		return 10000, nil
	}
	step, _ := strconv.Atoi(text)
	if step == 0 {
		return 0, f.errorf("step must be 1 or more, got 0 in %q", item)
	}
	return step, nil
}

func (f *field) parseRange(rng string, fi int) (lo, hi int, err *Error) {
	a, b, _ := strings.Cut(rng, "-")
	switch {
	case strings.Contains(b, "-"):
		return 0, 0, f.errorf("range %q has more than one '-'", rng)
	case a == "":
		return 0, 0, f.errorf("range %q is missing its start", rng)
	case b == "":
		return 0, 0, f.errorf("range %q is missing its end", rng)
	}
	if lo, err = f.parseValue(a); err != nil {
		return 0, 0, err
	}
	if hi, err = f.parseValue(b); err != nil {
		return 0, 0, err
	}
	if fi == fDayOfWeek && lo == 7 && hi != 7 {
		lo = 0 // Sunday starting a range is day 0, so SUN-SAT is the whole week
	}
	if lo > hi {
		return 0, 0, f.errorf("range %s is reversed: %d is after %d", rng, lo, hi)
	}
	return lo, hi, nil
}

// parseValue parses a number or a name of the field.
func (f *field) parseValue(tok string) (int, *Error) {
	if isDigits(tok) {
		v, err := strconv.Atoi(tok)
		if err != nil || v < f.min || v > f.max {
			return 0, f.errorf("%s is out of range %d-%d", tok, f.min, f.max)
		}
		return v, nil
	}
	for i, name := range f.names {
		if strings.EqualFold(tok, name) {
			return i + f.nameBase, nil
		}
	}
	if msg := unsupported(tok, f); msg != "" {
		return 0, f.errorf("%s", msg)
	}
	switch f.name {
	case "month":
		return 0, f.errorf("%q is not a month (1-12 or JAN-DEC)", tok)
	case "day-of-week":
		return 0, f.errorf("%q is not a day of the week (0-7 or SUN-SAT)", tok)
	}
	return 0, f.errorf("%q is not a number", tok)
}

// unsupported explains a Quartz extension in a day field, or returns "".
func unsupported(tok string, f *field) string {
	if f.name != "day-of-month" && f.name != "day-of-week" {
		return ""
	}
	t := strings.ToUpper(tok)
	switch {
	case strings.Contains(t, "#"):
		return fmt.Sprintf("%q: '#' (nth day of the week in the month) is not supported", tok)
	case strings.Contains(t, "L"):
		return fmt.Sprintf("%q: 'L' (last) is not supported", tok)
	case f.name == "day-of-month" && strings.Contains(t, "W"):
		return fmt.Sprintf("%q: 'W' (nearest weekday) is not supported", tok)
	}
	return ""
}

func (f *field) errorf(format string, args ...any) *Error {
	return &Error{Field: f.name, Msg: fmt.Sprintf(format, args...)}
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var monthNames = [13]string{"", "January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// maxDays is the length of each month in a leap year.
var maxDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// checkDates rejects a schedule whose days of the month exist in none of its months. Any date
// that exists falls on each day of the week within the 400-year Gregorian cycle, so a schedule
// that passes this check fires, whatever its day-of-week field.
func (s *Schedule) checkDates() *Error {
	var months []string
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		if uint64(s.dom)&daysThrough(maxDays[m]) != 0 {
			return nil
		}
		months = append(months, monthNames[m])
	}
	list := months[0]
	if k := len(months); k > 1 {
		list = strings.Join(months[:k-1], ", ") + " or " + months[k-1]
	}
	dom := string(formatField(nil, uint64(s.dom), 1, 31, true))
	return &Error{Msg: fmt.Sprintf("day-of-month %s never occurs in %s", dom, list)}
}

// daysThrough returns the mask of days 1..n.
func daysThrough(n int) uint64 { return 1<<(n+1) - 2 }
