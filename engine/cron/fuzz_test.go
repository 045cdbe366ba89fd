package cron

import (
	"errors"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	seeds := []string{
		"0 0/5 * * * *", "0 0 8 * * MON-FRI", "0 0 0 29 2 *", "0 0 0 13 * FRI", "* * * * * *",
		"0 0 12 ? * 7", "59 59 23 31 12 *", "0 0 0 * * SUN-SAT", "0 0 0 1 JAN/3 *",
		"0 0 9-17/2 * * *", "0 0 0 30 2 *", "0 0 0 L * *", "1,,2 * * * * *", "0 5-1 * * * *",
		"*/0 * * * * *", "0 0 0 ? * FRI#3", "0 0 * * *", "", "0/99999 * * 1-31/40 * *",
	}
	for i, s := range seeds {
		f.Add(s, int64(i)*7_919_000_017)
	}
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		f.Fatal(err)
	}
	fieldNames := map[string]bool{"": true}
	for _, fd := range fields {
		fieldNames[fd.name] = true
	}
	f.Fuzz(func(t *testing.T, expr string, at int64) {
		s, err := Parse(expr)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !fieldNames[e.Field] || e.Msg == "" {
				t.Fatalf("Parse(%q) error %#v is not a complete *Error", expr, err)
			}
			return
		}
		// An instant between 1970 and 2170, with a fraction of a second.
		const span = 200 * 365 * 86400
		after := time.Unix(int64(uint64(at)%span), int64(uint64(at)%1e9))

		next := s.Next(after, time.UTC)
		if !next.After(after) || !matchesWall(s, next.Unix()) {
			t.Fatalf("%q: Next(%v, UTC) = %v, want a matching time after it", expr, after, next)
		}
		if then := s.Next(next, time.UTC); then.Sub(next) < s.MinGap() {
			t.Fatalf("%q: fires at %v and %v, closer than MinGap %v", expr, next, then, s.MinGap())
		}
		local := s.Next(after, prague)
		if !local.After(after) {
			t.Fatalf("%q: Next(%v, Prague) = %v, want a time after it", expr, after, local)
		}
		_, off := local.Zone()
		if start, _ := local.ZoneBounds(); !matchesWall(s, local.Unix()+int64(off)) && !start.Equal(local) {
			t.Fatalf("%q: Next(%v, Prague) = %v neither matches nor ends a skipped stretch", expr, after, local)
		}

		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("%q: normal form %q does not parse: %v", expr, s.String(), err)
		}
		if *again != *s {
			t.Fatalf("%q: normal form %q parses to a different schedule", expr, s.String())
		}
	})
}
