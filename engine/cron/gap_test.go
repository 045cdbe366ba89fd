package cron

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestMinGap(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	tests := []struct {
		name string
		expr string
		want time.Duration
	}{
		{"every second", "* * * * * *", time.Second},
		{"every ten seconds", "*/10 * * * * *", 10 * time.Second},
		{"seconds wrapping into the next minute", "0,50 * * * * *", 10 * time.Second},
		{"seconds wrapping into the next hour", "0,50 0 * * * *", 50 * time.Second},
		{"last and first second of adjacent minutes", "0,59 * * * * *", time.Second},
		{"every minute", "0 * * * * *", time.Minute},
		{"every five minutes", "0 0/5 * * * *", 5 * time.Minute},
		{"minutes wrapping into the next hour", "0 0,55 * * * *", 5 * time.Minute},
		{"minutes 0-4 at second 30", "30 0-4 * * * *", time.Minute},
		{"hourly", "0 0 * * * *", time.Hour},
		{"hourly at two minutes", "0 0,59 * * * *", time.Minute},
		{"every minute of one hour a day", "0 * 2 * * *", time.Minute},
		{"twice a day", "0 0 0,12 * * *", 12 * time.Hour},
		{"late and early hours", "0 0 1,23 * * *", 2 * time.Hour},
		{"daily", "0 0 8 * * *", day},
		{"last second of one day, first of the next", "0,59 0,59 0,23 * * *", time.Second},
		{"weekday mornings", "0 0 8 * * MON-FRI", day},
		{"weekly", "0 0 8 * * MON", 7 * day},
		{"weekends", "0 0 8 * * SAT,SUN", day},
		{"Monday and Friday", "0 0 8 * * MON,FRI", 3 * day},
		{"31st of the month", "0 0 0 31 * *", 31 * day},
		{"1st of the month", "0 0 0 1 * *", 28 * day},
		{"Friday the 13th", "0 0 0 13 * FRI", 28 * day},
		{"leap day", "0 0 0 29 2 *", 1461 * day},
		{"yearly", "0 0 0 1 1 *", 365 * day},
		{"end and start of year", "0 0 0 1,31 1,12 *", day},
		{"every minute on the 1st", "0 * * 1 * *", time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.expr).MinGap(); got != tt.want {
				t.Errorf("MinGap(%q) = %v, want %v", tt.expr, got, tt.want)
			}
		})
	}
}

// TestMinDayGapMatchesCalendarWalk checks the gap between firing days against a walk over a
// whole 400-year cycle with the time package's calendar.
func TestMinDayGapMatchesCalendarWalk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
	}{
		{"leap day on a Monday", "0 0 0 29 2 MON"},
		{"Friday the 13th", "0 0 0 13 * FRI"},
		{"31st on weekends", "0 0 0 31 * SAT,SUN"},
		{"odd days in spring", "0 0 0 */2 3-5 *"},
		{"first week on Mondays", "0 0 0 1-7 * MON"},
		{"30th of February or March", "0 0 0 30 2,3 *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.expr)
			want := int64(1 << 62)
			var prev time.Time
			first := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
			for d := first; d.Before(first.AddDate(401, 0, 0)); d = d.AddDate(0, 0, 1) {
				if !matchesWall(s, d.Unix()) {
					continue
				}
				if !prev.IsZero() {
					want = min(want, int64(d.Sub(prev)/(24*time.Hour)))
				}
				prev = d
			}
			if got := s.minDayGap(); got != want {
				t.Errorf("minDayGap(%q) = %d, want %d", tt.expr, got, want)
			}
		})
	}
}

// TestMinGapMatchesFireTimes compares MinGap with the gaps between successive Next results in
// UTC over three days, for random expressions that fire every day: their shortest gap occurs
// within any two days.
func TestMinGapMatchesFireTimes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	cases := 200
	if testing.Short() {
		cases = 20
	}
	for range cases {
		expr := randomExpr(r)
		s, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		if s.dom != uint32(bitRange(1, 31)) || s.month != uint16(bitRange(1, 12)) || s.dow != 0x7f {
			continue
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		end := start.Add(72 * time.Hour)
		var observed time.Duration = 1 << 62
		prev := s.Next(start, time.UTC)
		for next := s.Next(prev, time.UTC); next.Before(end); next = s.Next(next, time.UTC) {
			observed = min(observed, next.Sub(prev))
			prev = next
		}
		if got := s.MinGap(); got != observed {
			t.Errorf("MinGap(%q) = %v, successive fire times are %v apart at least", expr, got, observed)
		}
	}
}
