package cron

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want string // String() of the parsed schedule
	}{
		{"every five minutes Spring style", "0 0/5 * * * *", "0 */5 * * * *"},
		{"weekday mornings", "0 0 8 * * MON-FRI", "0 0 8 * * 1-5"},
		{"extra whitespace and lower-case names", "  0\t0  8 * *   mon-fri ", "0 0 8 * * 1-5"},
		{"every second", "* * * * * *", "* * * * * *"},
		{"question marks in day fields", "0 0 12 ? * ?", "0 0 12 * * *"},
		{"seven is Sunday", "0 0 0 * * 7", "0 0 0 * * 0"},
		{"zero is Sunday", "0 0 0 * * 0", "0 0 0 * * 0"},
		{"Sunday name", "0 0 0 * * sun", "0 0 0 * * 0"},
		{"Sunday starts a range", "0 0 0 * * SUN-SAT", "0 0 0 * * *"},
		{"Sunday ends a range", "0 0 0 * * SAT-SUN", "0 0 0 * * 0,6"},
		{"numeric range to seven", "0 0 0 * * 5-7", "0 0 0 * * 0,5,6"},
		{"seven to seven", "0 0 0 * * 7-7", "0 0 0 * * 0"},
		{"day-of-week star step counts from Monday", "0 0 0 * * */2", "0 0 0 * * 0,1,3,5"},
		{"day-of-week value step", "0 0 0 * * 0/2", "0 0 0 * * 0,2,4,6"},
		{"day-of-week name step", "0 0 0 * * TUE/3", "0 0 0 * * 2,5"},
		{"month names and numbers", "0 0 0 1 JAN-MAR,dec *", "0 0 0 1 1-3,12 *"},
		{"month name step", "0 0 0 1 JAN/3 *", "0 0 0 1 */3 *"},
		{"second step", "*/15 * * * * *", "*/15 * * * * *"},
		{"step from a value", "5/15 * * * * *", "5/15 * * * * *"},
		{"stepped range", "0 0 9-17/2 * * *", "0 0 9-17/2 * * *"},
		{"pair and run", "1,2,10-12 0 0 * * *", "1,2,10-12 0 0 * * *"},
		{"list that is no progression", "0,1,5 0 0 * * *", "0,1,5 0 0 * * *"},
		{"leading zeros", "00 05 08 * * *", "0 5 8 * * *"},
		{"step wider than the field", "0/99999 * * 1-31/40 * *", "0 * * 1 * *"},
		{"leap day", "0 0 0 29 2 *", "0 0 0 29 2 *"},
		{"thirtieth in February or March", "0 0 0 30 2,3 *", "0 0 0 30 2,3 *"},
		{"Friday the 13th", "0 0 0 13 * FRI", "0 0 0 13 * 5"},
		{"last second of the year", "59 59 23 31 12 *", "59 59 23 31 12 *"},
		{"overlapping list items", "0 0-10,5-15 * * * *", "0 0-15 * * * *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.expr, err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.expr, got, tt.want)
			}
			again, err := Parse(s.String())
			if err != nil {
				t.Fatalf("Parse(%q) of the normal form: %v", s.String(), err)
			}
			if *again != *s {
				t.Errorf("normal form %q parses to a different schedule", s.String())
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	const fieldCountMsg = "cron expression must have 6 fields (second minute hour day-of-month month day-of-week), got "
	tests := []struct {
		name  string
		expr  string
		field string
		msg   string
	}{
		{"empty", "", "", fieldCountMsg + "0"},
		{"blank", "   ", "", fieldCountMsg + "0"},
		{"five fields", "0 0 * * *", "", fieldCountMsg + "5"},
		{"seven fields", "0 0 0 * * * 2026", "", fieldCountMsg + "7"},
		{"second too large", "60 * * * * *", "second", "60 is out of range 0-59"},
		{"minute too large", "0 60 * * * *", "minute", "60 is out of range 0-59"},
		{"hour too large", "0 0 24 * * *", "hour", "24 is out of range 0-23"},
		{"day-of-month too large", "0 0 0 32 * *", "day-of-month", "32 is out of range 1-31"},
		{"day-of-month zero", "0 0 0 0 * *", "day-of-month", "0 is out of range 1-31"},
		{"month too large", "0 0 0 * 13 *", "month", "13 is out of range 1-12"},
		{"month zero", "0 0 0 * 0 *", "month", "0 is out of range 1-12"},
		{"day-of-week too large", "0 0 0 * * 8", "day-of-week", "8 is out of range 0-7"},
		{"huge number", "99999999999999999999 * * * * *", "second", "99999999999999999999 is out of range 0-59"},
		{"range end out of range", "0 0 0 1-32 * *", "day-of-month", "32 is out of range 1-31"},
		{"reversed range", "0 5-1 * * * *", "minute", "range 5-1 is reversed: 5 is after 1"},
		{"reversed day names", "0 0 0 * * FRI-MON", "day-of-week", "range FRI-MON is reversed: 5 is after 1"},
		{"step zero", "*/0 * * * * *", "second", `step must be 1 or more, got 0 in "*/0"`},
		{"step zero on a range", "0 0 1-5/00 * * *", "hour", `step must be 1 or more, got 0 in "1-5/00"`},
		{"missing step", "0 5/ * * * *", "minute", `"5/" is missing a step after '/'`},
		{"step not a number", "0 5/x * * * *", "minute", `step "x" in "5/x" is not a number`},
		{"two steps", "0 1/2/3 * * * *", "minute", `step "2/3" in "1/2/3" is not a number`},
		{"missing start before step", "0 /5 * * * *", "minute", `"/5" is missing a value before '/'`},
		{"empty list item", "1,,2 * * * * *", "second", `empty item in list "1,,2"`},
		{"trailing comma", "0 0 1, * * *", "hour", `empty item in list "1,"`},
		{"leading comma", "0 0 0 ,1 * *", "day-of-month", `empty item in list ",1"`},
		{"missing range start", "-1 * * * * *", "second", `range "-1" is missing its start`},
		{"missing range end", "0 1- * * * *", "minute", `range "1-" is missing its end`},
		{"range with two dashes", "0 1-2-3 * * * *", "minute", `range "1-2-3" has more than one '-'`},
		{"question mark in seconds", "? * * * * *", "second", "'?' is only allowed in day-of-month and day-of-week"},
		{"question mark in month", "0 0 0 * ? *", "month", "'?' is only allowed in day-of-month and day-of-week"},
		{"not a number", "x * * * * *", "second", `"x" is not a number`},
		{"signed number", "+5 * * * * *", "second", `"+5" is not a number`},
		{"name in the hour field", "0 0 MON * * *", "hour", `"MON" is not a number`},
		{"unknown month", "0 0 0 * FOO *", "month", `"FOO" is not a month (1-12 or JAN-DEC)`},
		{"unknown day", "0 0 0 * * FOO", "day-of-week", `"FOO" is not a day of the week (0-7 or SUN-SAT)`},
		{"day name in month field", "0 0 0 * MON *", "month", `"MON" is not a month (1-12 or JAN-DEC)`},
		{"last day of month", "0 0 0 L * *", "day-of-month", `"L": 'L' (last) is not supported`},
		{"last day offset", "0 0 0 L-3 * *", "day-of-month", `"L": 'L' (last) is not supported`},
		{"last weekday of month", "0 0 0 LW * *", "day-of-month", `"LW": 'L' (last) is not supported`},
		{"nearest weekday", "0 0 0 15W * *", "day-of-month", `"15W": 'W' (nearest weekday) is not supported`},
		{"last Friday", "0 0 0 ? * 5L", "day-of-week", `"5L": 'L' (last) is not supported`},
		{"third Friday", "0 0 0 ? * FRI#3", "day-of-week", `"FRI#3": '#' (nth day of the week in the month) is not supported`},
		{"February 30", "0 0 0 30 2 *", "", "day-of-month 30 never occurs in February"},
		{"February 30 and 31", "0 0 0 30,31 FEB *", "", "day-of-month 30,31 never occurs in February"},
		{"31st in short months", "0 0 0 31 4,6,9,11 *", "", "day-of-month 31 never occurs in April, June, September or November"},
		{"31st in two months", "0 0 0 31 2,4 *", "", "day-of-month 31 never occurs in February or April"},
		{"February 30 on Mondays", "0 0 0 30 2 MON", "", "day-of-month 30 never occurs in February"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want an error", tt.expr, s)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %v is %T, want *Error", tt.expr, err, err)
			}
			if e.Field != tt.field || e.Msg != tt.msg {
				t.Errorf("Parse(%q) = {Field: %q, Msg: %q}, want {Field: %q, Msg: %q}",
					tt.expr, e.Field, e.Msg, tt.field, tt.msg)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"field", &Error{Field: "day-of-month", Msg: "32 is out of range 1-31"}, "day-of-month: 32 is out of range 1-31"},
		{"whole expression", &Error{Msg: "day-of-month 30 never occurs in February"}, "day-of-month 30 never occurs in February"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

// Every date that exists falls on every day of the week sooner or later, so day-of-week never
// makes a schedule impossible once its dates exist.
func TestEveryDateFallsOnEveryWeekday(t *testing.T) {
	t.Parallel()
	from := time.Date(2090, 1, 1, 0, 0, 0, 0, time.UTC) // the search spans the non-leap 2100
	for m := 1; m <= 12; m++ {
		for d := 1; d <= maxDays[m]; d++ {
			for wd := range 7 {
				expr := fmt.Sprintf("0 0 0 %d %d %d", d, m, wd)
				s, err := Parse(expr)
				if err != nil {
					t.Fatalf("Parse(%q): %v", expr, err)
				}
				got := s.Next(from, time.UTC)
				if got.Month() != time.Month(m) || got.Day() != d || int(got.Weekday()) != wd {
					t.Fatalf("%q: Next(%v) = %v", expr, from, got)
				}
			}
		}
	}
}
