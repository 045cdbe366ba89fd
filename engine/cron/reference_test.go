package cron

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// matchesWall reports whether the schedule names the wall-clock reading w (seconds after
// 1970-01-01 00:00:00), using the time package's calendar.
func matchesWall(s *Schedule, w int64) bool {
	t := time.Unix(w, 0).UTC()
	return s.second&(1<<t.Second()) != 0 &&
		s.minute&(1<<t.Minute()) != 0 &&
		s.hour&(1<<t.Hour()) != 0 &&
		s.dom&(1<<t.Day()) != 0 &&
		s.month&(1<<int(t.Month())) != 0 &&
		s.dow&(1<<int(t.Weekday())) != 0
}

func wallSeconds(x int64, loc *time.Location) int64 {
	_, off := time.Unix(x, 0).In(loc).Zone()
	return x + int64(off)
}

// referenceFires returns the fire instants in (after, until] by walking every second. The
// clock fires at instant x for the wall-clock times it reaches for the first time: those above
// the highest reading shown before x and at most the reading at x. lookback must cover the
// longest repeated stretch of the zone.
func referenceFires(s *Schedule, after, until int64, loc *time.Location, lookback int64) []int64 {
	var fires []int64
	highest := wallSeconds(after-lookback, loc)
	for x := after - lookback + 1; x <= until; x++ {
		w := wallSeconds(x, loc)
		if x > after {
			for v := highest + 1; v <= w; v++ {
				if matchesWall(s, v) {
					fires = append(fires, x)
					break
				}
			}
		}
		highest = max(highest, w)
	}
	return fires
}

// randomExpr returns a random expression that mostly fires within a day or two.
func randomExpr(r *rand.Rand) string {
	pick := func(choices ...string) string { return choices[r.IntN(len(choices))] }
	value := func(lo, hi int) int { return lo + r.IntN(hi-lo+1) }
	timeField := func(hi int) string {
		switch r.IntN(7) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", value(1, hi/2))
		case 2:
			return fmt.Sprintf("%d/%d", value(0, hi), value(1, hi))
		case 3:
			a := value(0, hi)
			return fmt.Sprintf("%d-%d", a, value(a, hi))
		case 4:
			a := value(0, hi)
			return fmt.Sprintf("%d-%d/%d", a, value(a, hi), value(1, 10))
		case 5:
			return fmt.Sprintf("%d,%d,%d", value(0, hi), value(0, hi), value(0, hi))
		}
		return fmt.Sprint(value(0, hi))
	}
	second := pick("0", "0", "0", "30", timeField(59))
	minute := pick("0", "*", "0/5", "30", timeField(59))
	hour := pick("*", "*", "*", timeField(23))
	dom, month, dow := pick("*", "?"), "*", pick("*", "?")
	switch r.IntN(5) { // mostly every day, else one day field restricted
	case 0:
		dom = pick("1-20", "10-31", "1,15,28", "*/2", fmt.Sprint(value(1, 31)))
	case 1:
		month = pick("JAN-JUN", "mar,oct,nov", "2-4,9-12", fmt.Sprint(value(1, 12)))
	case 2:
		dow = pick("MON-FRI", "SAT,SUN", "0", "7", "*/2", "5-7", fmt.Sprint(value(0, 7)))
	}
	return strings.Join([]string{second, minute, hour, dom, month, dow}, " ")
}

// TestNextMatchesReference compares the chain of Next results with the reference walk for
// random expressions around daylight saving changes and other offset changes.
func TestNextMatchesReference(t *testing.T) {
	t.Parallel()
	zones := []struct {
		name string
		year int
	}{
		{"UTC", 2026},
		{"Europe/Prague", 2026},
		{"America/New_York", 2026},
		{"Australia/Lord_Howe", 2026}, // half-hour shifts
		{"America/Sao_Paulo", 2018},   // changes at midnight
		{"Pacific/Apia", 2011},        // skipped 2011-12-30 entirely
		{"Europe/Moscow", 2014},       // permanent change of offset
		{"Europe/Prague", 2040},       // a leap year governed by the zone's rule, not its table
		{"Australia/Sydney", 2044},    // the same, southern hemisphere
	}
	cases := 30
	if testing.Short() {
		cases = 5
	}
	const (
		horizon  = 36 * 3600
		lookback = 3 * 3600
	)
	r := rand.New(rand.NewPCG(1, 2))
	for _, z := range zones {
		loc := mustLoad(t, z.name)
		for i := range cases {
			expr := randomExpr(r)
			s, err := Parse(expr)
			if err != nil {
				continue // an impossible date combination
			}
			after := randomInstantNearChange(r, z.year, loc)
			t.Run(fmt.Sprintf("%s/%d", z.name, i), func(t *testing.T) {
				want := referenceFires(s, after.Unix(), after.Unix()+horizon, loc, lookback)
				prev := after
				for _, w := range want {
					got := s.Next(prev, loc)
					if got.Unix() != w || got.Nanosecond() != 0 {
						t.Fatalf("%q in %s: Next(%s) = %s, want %s", expr, z.name,
							prev.In(loc).Format(time.RFC3339Nano), got.Format(time.RFC3339), time.Unix(w, 0).In(loc).Format(time.RFC3339))
					}
					prev = got
				}
				until := after.Unix() + horizon
				if got := s.Next(prev, loc); got.Unix() <= until {
					t.Fatalf("%q in %s: Next(%s) = %s, reference has no fire by %s", expr, z.name,
						prev.In(loc).Format(time.RFC3339), got.Format(time.RFC3339),
						time.Unix(until, 0).In(loc).Format(time.RFC3339))
				}
				// Start from arbitrary instants too, not only from fire times.
				for range 50 {
					from := after.Add(time.Duration(r.Int64N(horizon * int64(time.Second))))
					i, _ := slices.BinarySearch(want, from.Unix()+1)
					got := s.Next(from, loc)
					if i == len(want) && got.Unix() <= until {
						t.Fatalf("%q in %s: Next(%s) = %s, reference has no fire by %s", expr, z.name,
							from.In(loc).Format(time.RFC3339Nano), got.Format(time.RFC3339),
							time.Unix(until, 0).In(loc).Format(time.RFC3339))
					}
					if i < len(want) && got.Unix() != want[i] {
						t.Fatalf("%q in %s: Next(%s) = %s, want %s", expr, z.name,
							from.In(loc).Format(time.RFC3339Nano), got.Format(time.RFC3339),
							time.Unix(want[i], 0).In(loc).Format(time.RFC3339))
					}
				}
			})
		}
	}
}

// randomInstantNearChange returns an instant from 30 hours before to 3 hours after a change of
// loc's offset in the given year (any instant in the year for a zone without changes),
// sometimes with a fraction of a second.
func randomInstantNearChange(r *rand.Rand, year int, loc *time.Location) time.Time {
	start := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	t := time.Unix(start+r.Int64N(365*86400), 0).In(loc)
	if _, end := t.ZoneBounds(); !end.IsZero() && end.After(t) && end.Year() == year {
		t = end.Add(time.Duration(r.Int64N(33*3600)-30*3600) * time.Second)
	}
	if r.IntN(5) == 0 { // the turn of the year
		t = time.Unix(start+365*86400-r.Int64N(30*3600), 0).In(loc)
	}
	if r.IntN(4) == 0 {
		t = t.Add(time.Duration(r.Int64N(int64(time.Second))))
	}
	return t
}
