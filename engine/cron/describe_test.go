package cron

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// describeTests are expressions and their exact descriptions.
var describeTests = []struct {
	expr string
	want string
}{
	// Every N seconds, minutes, hours.
	{"* * * * * *", "Every second"},
	{"*/10 * * * * *", "Every 10 seconds"},
	{"0/30 * * * * ?", "Every 30 seconds"},
	{"5/15 * * * * *", "Every 15 seconds, at 5, 20, 35 and 50 seconds past the minute"},
	{"1/2 * * * * *", "Every 2 seconds, at 1, 3, 5, …, 59 seconds past the minute"},
	{"0 * * * * *", "Every minute"},
	{"30 * * * * *", "Every minute at second 30"},
	{"0 0/5 * * * *", "Every 5 minutes"},
	{"0 */15 * * * MON-FRI", "Every 15 minutes on Monday to Friday"},
	{"0 5/15 * * * *", "Every 15 minutes, at 5, 20, 35 and 50 minutes past the hour"},
	{"30 */5 * * * *", "Every 5 minutes at second 30"},
	{"30 5/15 * * * *", "Every 15 minutes, at 5, 20, 35 and 50 minutes and 30 seconds past the hour"},
	{"0 */7 * * * *", "Every 7 minutes from 0 to 56 minutes past the hour"},
	{"0 0 * * * *", "Every hour"},
	{"0 15 * * * *", "Every hour at minute 15"},
	{"30 15 * * * *", "Every hour at minute 15, second 30"},
	{"0 0 */2 * * *", "Every 2 hours"},
	{"0 0 */3 * * SAT,SUN", "Every 3 hours on Saturday and Sunday"},
	{"0 30 1/2 * * *", "Every 2 hours from 01:30 to 23:30"},

	// Windows of hours.
	{"0 */15 9-17 * * MON-FRI", "Every 15 minutes from 09:00 to 17:45 on Monday to Friday"},
	{"0 0/30 9-11,13-17 * * *", "Every 30 minutes from 09:00 to 11:30 and from 13:00 to 17:30"},
	{"*/20 * 22-23 * * *", "Every 20 seconds from 22:00 to 23:59:40"},
	{"0 0 9-17 * * *", "Every hour from 09:00 to 17:00"},
	{"0 */15 1,3,5,7 * * *", "Every 15 minutes during hours 1, 3, 5 and 7"},
	{"0 0-30 9 * * *", "Every minute from 09:00 to 09:30"},
	{"0 0-30 * * * *", "Every minute from 0 to 30 minutes past the hour"},
	{"0-29 * * * * *", "Every second from 0 to 29 seconds past the minute"},
	{"0 0,15,45 * * * *", "Every hour at minutes 0, 15 and 45"},
	{"0 0,15,45 9-17 * * *", "At minutes 0, 15 and 45 of hours 9 to 17 every day"},
	{"0 3,7,11 1-5 * * *", "At minutes 3, 7 and 11 of hours 1 to 5 every day"},
	{"0,10,15 * * * * *", "Every minute at seconds 0, 10 and 15"},
	{"0 0 1,2,5,9,11,13,20 * * *", "At minute 0 of hours 1, 2, 5, 9, 11, 13 and 20 every day"},

	// Fixed times.
	{"0 0 12 * * *", "At 12:00 every day"},
	{"0 0 8 * * MON-FRI", "At 08:00 on Monday to Friday"},
	{"  0 0 8 ? * mon-fri ", "At 08:00 on Monday to Friday"},
	{"0 0,30 8,17 * * *", "At 08:00, 08:30, 17:00 and 17:30 every day"},
	{"0 0 */6 * * *", "At 00:00, 06:00, 12:00 and 18:00 every day"},
	{"30 0 12 * * SAT,SUN", "At 12:00:30 on Saturday and Sunday"},
	{"0,30 0 12 * * *", "At 12:00 and 12:00:30 every day"},
	{"0 0 8 * * */2", "At 08:00 on Monday, Wednesday, Friday and Sunday"},
	{"0 0 8 * * 7", "At 08:00 on Sunday"},
	{"0 0 8 * * SUN-SAT", "At 08:00 every day"},
	{"0 0 8 * * FRI-SUN", "At 08:00 on Friday to Sunday"},

	// Days of the month and months.
	{"0 0 9 1 * *", "At 09:00 on day 1 of the month"},
	{"0 0 12 1,15 * *", "At 12:00 on days 1 and 15 of the month"},
	{"0 0 0 1/2 * *", "At 00:00 on days 1, 3, 5, …, 31 of the month"},
	{"0 0 0 1 1 *", "At 00:00 on 1 January"},
	{"0 0 0 29 FEB *", "At 00:00 on 29 February"},
	{"0 0 0 1-7 JAN *", "At 00:00 on days 1 to 7 of January"},
	{"0 0 0 1 */3 *", "At 00:00 on day 1 of the month in January, April, July and October"},
	{"0 0 0 1-5 JAN-MAR *", "At 00:00 on days 1 to 5 of the month in January to March"},
	{"0 0 0 * 1 *", "At 00:00 every day in January"},
	{"0 */5 * * DEC *", "Every 5 minutes in December"},
	{"0 0 8 * JUN-AUG MON-FRI", "At 08:00 on Monday to Friday in June to August"},

	// Both day fields: a day must match both.
	{"0 0 0 13 * FRI", "At 00:00 on Friday the 13th"},
	{"0 0 0 13 6,12 FRI", "At 00:00 on Friday the 13th in June and December"},
	{"0 0 10 1-7 * MON", "At 10:00 on the first Monday of the month"},
	{"0 0 10 8-14 JAN MON", "At 10:00 on the second Monday of January"},
	{"0 0 10 29-31 * MON", "At 10:00 on the fifth Monday of the month"},
	{"0 0 0 13 * SAT,SUN", "At 00:00 on day 13 of the month if it falls on Saturday or Sunday"},
	{"0 0 8 1-10 * MON-FRI", "At 08:00 on days 1 to 10 of the month that fall on Monday to Friday"},
	{"0 0 8 1-10 3,9 MON-FRI", "At 08:00 on days 1 to 10 of the month that fall on Monday to Friday in March and September"},

	// Field by field.
	{"* 0-10 * * * *", "At every second, minutes 0-10, every hour, every day"},
	{"15 0,1,5,7,9,11,13,17,20 * * * MON", "At second 15, minutes 0,1,5,7,9,11,13,17,20, every hour, on Monday"},
	{"0 0,1,5,7,9,11,13,17,20 * * * *", "At second 0, minutes 0,1,5,7,9,11,13,17,20, every hour, every day"},
	{"0,30 0-10 * * * *", "At seconds 0,30, minutes 0-10, every hour, every day"},
	{"*/5 0 0-11 * * *", "At seconds 0,5,10,…,55, minute 0, hours 0-11, every day"},
	{"0 0-29,31-59 * 1 * *", "At second 0, minutes 0-29,31-59, every hour, on day 1 of the month"},
	{"0 0-9,11-19,21-29,31-59 * * * *", "At second 0, every minute except 10,20,30, every hour, every day"},
	{"0 0-10,20,40 * * * *", "At second 0, minutes 0-10,20,40, every hour, every day"},
	{"0 1-58 * * * *", "Every minute from 1 to 58 minutes past the hour"},
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, tt := range describeTests {
		got, err := Describe(tt.expr)
		if err != nil {
			t.Errorf("Describe(%q): %v", tt.expr, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Describe(%q)\n got %q\nwant %q", tt.expr, got, tt.want)
		}
	}
}

func TestDescribeRefused(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"", "0 0 * * *", "60 * * * * *", "0 0 0 L * *", "0 0 0 30 2 *", "0 0 0 * * FRI#3"} {
		_, parseErr := Parse(expr)
		got, err := Describe(expr)
		if err == nil || got != "" {
			t.Errorf("Describe(%q) = %q, %v; want Parse's error", expr, got, err)
			continue
		}
		if err.Error() != parseErr.Error() {
			t.Errorf("Describe(%q) error %q, want Parse's %q", expr, err, parseErr)
		}
	}
}

// fires returns the first n fire times of expr in UTC after the instant after.
func fires(tb testing.TB, expr string, after time.Time, n int) []time.Time {
	tb.Helper()
	s := mustParse(tb, expr)
	var ts []time.Time
	for t := after; len(ts) < n; {
		t = s.Next(t, time.UTC)
		ts = append(ts, t)
	}
	return ts
}

// The words of fixed-time descriptions agree with Next. The expected fires were worked out
// from the words, not from Next.
func TestDescribeAgreesWithNext(t *testing.T) {
	t.Parallel()
	after := mustTime(t, "2026-01-15T12:00:00Z") // a Thursday
	tests := []struct {
		expr  string
		words string
		after time.Time
		want  []string
	}{
		{"0 0 8 * * MON-FRI", "At 08:00 on Monday to Friday", after, []string{
			"2026-01-16T08:00:00Z", "2026-01-19T08:00:00Z", "2026-01-20T08:00:00Z", "2026-01-21T08:00:00Z", "2026-01-22T08:00:00Z"}},
		{"0 0,30 8,17 * * *", "At 08:00, 08:30, 17:00 and 17:30 every day", after, []string{
			"2026-01-15T17:00:00Z", "2026-01-15T17:30:00Z", "2026-01-16T08:00:00Z", "2026-01-16T08:30:00Z", "2026-01-16T17:00:00Z"}},
		{"0 0 9 1 * *", "At 09:00 on day 1 of the month", after, []string{
			"2026-02-01T09:00:00Z", "2026-03-01T09:00:00Z", "2026-04-01T09:00:00Z", "2026-05-01T09:00:00Z", "2026-06-01T09:00:00Z"}},
		{"0 0 0 1 1 *", "At 00:00 on 1 January", after, []string{
			"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", "2029-01-01T00:00:00Z", "2030-01-01T00:00:00Z", "2031-01-01T00:00:00Z"}},
		{"30 0 12 * * SAT,SUN", "At 12:00:30 on Saturday and Sunday", after, []string{
			"2026-01-17T12:00:30Z", "2026-01-18T12:00:30Z", "2026-01-24T12:00:30Z", "2026-01-25T12:00:30Z", "2026-01-31T12:00:30Z"}},
		{"0 0 0 13 * FRI", "At 00:00 on Friday the 13th", after, []string{
			"2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z", "2026-11-13T00:00:00Z", "2027-08-13T00:00:00Z", "2028-10-13T00:00:00Z"}},
		{"0 0 10 1-7 * MON", "At 10:00 on the first Monday of the month", after, []string{
			"2026-02-02T10:00:00Z", "2026-03-02T10:00:00Z", "2026-04-06T10:00:00Z", "2026-05-04T10:00:00Z", "2026-06-01T10:00:00Z"}},
		{"0 0 0 13 * SAT,SUN", "At 00:00 on day 13 of the month if it falls on Saturday or Sunday", after, []string{
			"2026-06-13T00:00:00Z", "2026-09-13T00:00:00Z", "2026-12-13T00:00:00Z", "2027-02-13T00:00:00Z", "2027-03-13T00:00:00Z"}},
		{"0 0 8 1-10 * MON-FRI", "At 08:00 on days 1 to 10 of the month that fall on Monday to Friday", after, []string{
			"2026-02-02T08:00:00Z", "2026-02-03T08:00:00Z", "2026-02-04T08:00:00Z", "2026-02-05T08:00:00Z", "2026-02-06T08:00:00Z",
			"2026-02-09T08:00:00Z", "2026-02-10T08:00:00Z", "2026-03-02T08:00:00Z"}},
		{"0 */15 9-17 * * MON-FRI", "Every 15 minutes from 09:00 to 17:45 on Monday to Friday", mustTime(t, "2026-01-16T17:40:00Z"), []string{
			"2026-01-16T17:45:00Z", "2026-01-19T09:00:00Z", "2026-01-19T09:15:00Z", "2026-01-19T09:30:00Z", "2026-01-19T09:45:00Z"}},
		{"0 0 0 29 2 *", "At 00:00 on 29 February", after, []string{
			"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}},
	}
	for _, tt := range tests {
		if got, _ := Describe(tt.expr); got != tt.words {
			t.Errorf("Describe(%q) = %q, want %q", tt.expr, got, tt.words)
		}
		var got []string
		for _, f := range fires(t, tt.expr, tt.after, len(tt.want)) {
			got = append(got, f.Format(time.RFC3339))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q (%s): next fires\n got %v\nwant %v", tt.expr, tt.words, got, tt.want)
		}
	}
}

// Over many years, the days on which schedules that restrict both day fields fire are exactly
// the days their descriptions name, each predicate written from the words alone.
func TestDescribeDaysAgreeWithNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr  string
		words string
		day   func(time.Time) bool
	}{
		{"0 0 0 13 * FRI", "At 00:00 on Friday the 13th", func(d time.Time) bool {
			return d.Day() == 13 && d.Weekday() == time.Friday
		}},
		{"0 0 0 13 6,12 FRI", "At 00:00 on Friday the 13th in June and December", func(d time.Time) bool {
			return d.Day() == 13 && d.Weekday() == time.Friday && (d.Month() == time.June || d.Month() == time.December)
		}},
		{"0 0 0 1-7 * MON", "At 00:00 on the first Monday of the month", func(d time.Time) bool {
			return d.Weekday() == time.Monday && d.AddDate(0, 0, -7).Month() != d.Month()
		}},
		{"0 0 0 8-14 JAN MON", "At 00:00 on the second Monday of January", func(d time.Time) bool {
			return d.Month() == time.January && d.Weekday() == time.Monday &&
				d.AddDate(0, 0, -7).Month() == d.Month() && d.AddDate(0, 0, -14).Month() != d.Month()
		}},
		{"0 0 0 29-31 * SUN", "At 00:00 on the fifth Sunday of the month", func(d time.Time) bool {
			return d.Weekday() == time.Sunday && d.AddDate(0, 0, -28).Month() == d.Month()
		}},
		{"0 0 0 13 * SAT,SUN", "At 00:00 on day 13 of the month if it falls on Saturday or Sunday", func(d time.Time) bool {
			return d.Day() == 13 && (d.Weekday() == time.Saturday || d.Weekday() == time.Sunday)
		}},
		{"0 0 0 1-10 3,9 MON-FRI", "At 00:00 on days 1 to 10 of the month that fall on Monday to Friday in March and September", func(d time.Time) bool {
			wd := d.Weekday()
			return d.Day() <= 10 && wd != time.Saturday && wd != time.Sunday && (d.Month() == time.March || d.Month() == time.September)
		}},
		{"0 0 0 31 * *", "At 00:00 on day 31 of the month", func(d time.Time) bool { return d.Day() == 31 }},
	}
	from, until := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2066, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		if got, _ := Describe(tt.expr); got != tt.words {
			t.Errorf("Describe(%q) = %q, want %q", tt.expr, got, tt.words)
		}
		var want []time.Time
		for d := from; d.Before(until); d = d.AddDate(0, 0, 1) {
			if tt.day(d) {
				want = append(want, d)
			}
		}
		s := mustParse(t, tt.expr)
		var got []time.Time
		for f := s.Next(from.Add(-time.Second), time.UTC); f.Before(until); f = s.Next(f, time.UTC) {
			got = append(got, f)
		}
		if !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Errorf("%q (%s): Next gives %d fires from %v, the words %d", tt.expr, tt.words, len(got), from, len(want))
		}
	}
}

// The longest description: the field-by-field form with compact lists, every field as long as
// it can be. A time field's values and its complement's together write each of the 60 (or 24)
// values at most once plus at most 58 (22) separators, 168 (60) bytes, so the shorter of
// "seconds X" and "every second except Y" is at most (8+20+168)/2 = 98 bytes and the hours at
// most (6+18+60)/2 = 42. A day-of-month list writes at most 21 numbers (no run of three),
// 56 bytes; the months at most "Jan,Feb,Apr,May,Jul,Aug,Oct,Nov" and the days of the week
// "Mon,Tue,Thu,Fri,Sun". In all: 3+98+2+98+2+42+2 + 8+56+27+19+4+31 = 392 bytes.
func TestDescribeWorstCaseLength(t *testing.T) {
	t.Parallel()
	const (
		sixty = "1,2,4,6,7,10,11,13,15,17,19,21,22,24,26,29,31,32,35,36,39,41,42,44,46,48,49,51,54,56,57,59"
		hours = "0,3,6,7,9,11,12,14,15,17,18,20,22,23"
		dom   = "1,2,4,5,7,8,10,11,13,15,16,18,19,21,22,24,25,27,28,30,31"
	)
	expr := sixty + " " + sixty + " " + hours + " " + dom + " JAN,FEB,APR,MAY,JUL,AUG,OCT,NOV MON,TUE,THU,FRI,SUN"
	got, err := Describe(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 392 {
		t.Errorf("Describe(%q) is %d bytes, want the worst case of 392:\n%s", expr, len(got), got)
	}
	if !strings.Contains(got, "Jan,Feb") {
		t.Errorf("Describe(%q) = %q, want compact day lists", expr, got)
	}

	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := Schedule{
			second: r.Uint64() & bitRange(0, 59),
			minute: r.Uint64() & bitRange(0, 59),
			hour:   uint32(r.Uint64() & allHours),
			dom:    uint32(r.Uint64() & allDom),
			month:  uint16(r.Uint64() & allMonths),
			dow:    uint8(r.Uint64() & allDow),
		}
		if s.second == 0 || s.minute == 0 || s.hour == 0 || s.dom == 0 || s.month == 0 || s.dow == 0 {
			continue
		}
		if d := s.describe(); d == "" || len(d) > maxDescription {
			t.Fatalf("%s: description of %d bytes: %q", s.String(), len(d), d)
		}
	}
}

func FuzzDescribe(f *testing.F) {
	for _, s := range []string{
		"* * * * * *", "0 */15 9-17 * * MON-FRI", "0 0 0 13 * FRI", "0 0 10 1-7 * MON", "5/15 * * * * *",
		"0 3,7,11 1-5 * * *", "* 0-10 * * * *", "0 0 0 1 */3 *", "0 0 8 1-10 3,9 MON-FRI", "0 0 0 30 2 *",
		"0/99999 * * 1-31/40 * *", "1,2,4,5,7,8 0,1,3,4 0,1,3 1,2,4 1,2,4 1,2,4", "0 0 0 L * *", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		got, err := Describe(expr)
		s, parseErr := Parse(expr)
		if parseErr != nil {
			if err == nil || err.Error() != parseErr.Error() || got != "" {
				t.Fatalf("Describe(%q) = %q, %v; Parse refuses it: %v", expr, got, err, parseErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("Describe(%q): %v; Parse accepts it", expr, err)
		}
		if got == "" || len(got) > maxDescription || !utf8.ValidString(got) {
			t.Fatalf("Describe(%q) = %q (%d bytes), want 1 to %d bytes of UTF-8", expr, got, len(got), maxDescription)
		}
		// The words depend on the schedule, not on how the expression spells it.
		if again, _ := Describe(s.String()); again != got {
			t.Fatalf("Describe(%q) = %q, but its normal form %q gives %q", expr, got, s.String(), again)
		}
	})
}
