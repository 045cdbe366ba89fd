package cron

import (
	"testing"
	"time"
	_ "time/tzdata" // the DST cases must not depend on the machine's zone database
)

func mustLoad(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func mustParse(tb testing.TB, expr string) *Schedule {
	tb.Helper()
	s, err := Parse(expr)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", expr, err)
	}
	return s
}

func mustTime(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestNext(t *testing.T) {
	t.Parallel()
	const (
		utc     = "UTC"
		prague  = "Europe/Prague"
		newYork = "America/New_York"
	)
	tests := []struct {
		name  string
		expr  string
		zone  string
		after string
		want  string // an instant; its offset shows the expected local reading
	}{
		{"every five minutes", "0 0/5 * * * *", utc, "2026-01-15T10:02:30Z", "2026-01-15T10:05:00Z"},
		{"strictly after a fire time", "0 0/5 * * * *", utc, "2026-01-15T10:05:00Z", "2026-01-15T10:10:00Z"},
		{"just before a fire time", "0 0/5 * * * *", utc, "2026-01-15T10:04:59.999999999Z", "2026-01-15T10:05:00Z"},
		{"within the firing second", "0 0/5 * * * *", utc, "2026-01-15T10:05:00.5Z", "2026-01-15T10:10:00Z"},
		{"every five minutes across the hour", "0 0/5 * * * *", utc, "2026-01-15T10:59:59Z", "2026-01-15T11:00:00Z"},
		{"weekday mornings skip the weekend", "0 0 8 * * MON-FRI", utc, "2026-01-16T08:00:00Z", "2026-01-19T08:00:00Z"},
		{"weekday mornings from Saturday", "0 0 8 * * MON-FRI", utc, "2026-01-17T12:00:00Z", "2026-01-19T08:00:00Z"},
		{"weekday mornings later the same day", "0 0 8 * * MON-FRI", utc, "2026-01-15T07:59:59Z", "2026-01-15T08:00:00Z"},
		{"31st skips February", "0 0 0 31 * *", utc, "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z"},
		{"31st skips June", "0 0 0 31 * *", utc, "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"},
		{"31st skips April", "0 0 0 31 * *", utc, "2026-04-01T00:00:00Z", "2026-05-31T00:00:00Z"},
		{"leap day", "0 0 0 29 2 *", utc, "2025-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"leap day skips 2100", "0 0 0 29 2 *", utc, "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z"},
		{"leap day in the first century", "0 0 0 29 2 *", utc, "0001-01-01T00:00:00Z", "0004-02-29T00:00:00Z"},
		{"leap day on a Friday", "0 0 0 29 2 FRI", utc, "2026-01-01T00:00:00Z", "2036-02-29T00:00:00Z"},
		{"seven is Sunday", "0 0 12 * * 7", utc, "2026-01-15T00:00:00Z", "2026-01-18T12:00:00Z"},
		{"zero is Sunday", "0 0 12 * * 0", utc, "2026-01-15T00:00:00Z", "2026-01-18T12:00:00Z"},
		{"question mark", "0 0 12 ? * SUN", utc, "2026-01-15T00:00:00Z", "2026-01-18T12:00:00Z"},
		{"day-of-week step from Monday", "0 0 0 * * */2", utc, "2026-01-15T00:00:00Z", "2026-01-16T00:00:00Z"},
		{"Friday the 13th", "0 0 0 13 * FRI", utc, "2026-01-01T00:00:00Z", "2026-02-13T00:00:00Z"},
		{"Friday the 13th again a month later", "0 0 0 13 * FRI", utc, "2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"},
		{"Friday the 13th in November", "0 0 0 13 * FRI", utc, "2026-03-13T00:00:00Z", "2026-11-13T00:00:00Z"},
		{"year rollover", "0 0 0 1 1 *", utc, "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{"last second of the year", "59 59 23 31 12 *", utc, "2026-12-31T23:59:59Z", "2027-12-31T23:59:59Z"},
		{"every second at year end", "* * * * * *", utc, "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{"month names", "0 0 0 1 JAN,jul *", utc, "2026-02-01T00:00:00Z", "2026-07-01T00:00:00Z"},
		{"month name range into next year", "0 0 6 1 NOV-DEC *", utc, "2026-12-01T06:00:00Z", "2027-11-01T06:00:00Z"},
		{"zone offset applied", "0 0 8 * * *", prague, "2026-01-15T07:00:00Z", "2026-01-16T08:00:00+01:00"},
		{"after given in another zone", "0 0 8 * * *", newYork, "2026-01-15T12:00:00Z", "2026-01-15T08:00:00-05:00"},

		// After 2037 the zone database gives rules, not a list of changes.
		{"Prague into the last day of a leap year", "0 0 8 * * MON-FRI", prague, "2040-12-28T08:00:00+01:00", "2040-12-31T08:00:00+01:00"},
		{"Prague out of the last day of a leap year", "0 0 8 * * MON-FRI", prague, "2040-12-31T08:00:00+01:00", "2041-01-01T08:00:00+01:00"},
		{"Prague skipped time in 2040", "0 30 2 * * *", prague, "2040-03-25T00:00:00+01:00", "2040-03-25T03:00:00+02:00"},
		{"Prague repeated time in 2040", "0 30 2 * * *", prague, "2040-10-28T02:30:00+02:00", "2040-10-29T02:30:00+01:00"},

		// Europe/Prague springs forward on 2026-03-29 at 02:00 CET to 03:00 CEST.
		{"Prague skipped time fires after the jump", "0 30 2 * * *", prague, "2026-03-29T00:00:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"Prague skipped time next day", "0 30 2 * * *", prague, "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"},
		{"Prague skipped hour fires once", "0 * 2 * * *", prague, "2026-03-29T01:59:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"Prague skipped hour not again", "0 * 2 * * *", prague, "2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"},
		{"Prague every minute over the jump", "0 * * * * *", prague, "2026-03-29T01:59:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"Prague every minute after the jump", "0 * * * * *", prague, "2026-03-29T03:00:00+02:00", "2026-03-29T03:01:00+02:00"},
		{"Prague half past every hour", "0 30 * * * *", prague, "2026-03-29T01:30:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"Prague half past after the merged fire", "0 30 * * * *", prague, "2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00"},
		{"Prague three o'clock exists", "0 0 3 * * *", prague, "2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"Prague last second before the jump", "59 59 1 * * *", prague, "2026-03-29T00:00:00+01:00", "2026-03-29T01:59:59+01:00"},
		// Europe/Prague falls back on 2026-10-25 at 03:00 CEST to 02:00 CET.
		{"Prague repeated time fires at first pass", "0 30 2 * * *", prague, "2026-10-25T00:00:00+02:00", "2026-10-25T02:30:00+02:00"},
		{"Prague repeated time not at second pass", "0 30 2 * * *", prague, "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"},
		{"Prague from inside the second pass", "0 30 2 * * *", prague, "2026-10-25T02:10:00+01:00", "2026-10-26T02:30:00+01:00"},
		{"Prague every minute skips second pass", "0 * * * * *", prague, "2026-10-25T02:59:00+02:00", "2026-10-25T03:00:00+01:00"},
		{"Prague every minute from the second pass", "0 * * * * *", prague, "2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"},
		{"Prague every second skips second pass", "* * * * * *", prague, "2026-10-25T02:59:59+02:00", "2026-10-25T03:00:00+01:00"},
		{"Prague first second of second pass", "* * * * * *", prague, "2026-10-25T02:59:59.5+02:00", "2026-10-25T03:00:00+01:00"},
		{"Prague three o'clock after the fall", "0 0 3 * * *", prague, "2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"},
		// America/New_York springs forward on 2026-03-08 at 02:00 EST to 03:00 EDT.
		{"New York skipped time fires after the jump", "0 30 2 * * *", newYork, "2026-03-08T00:00:00-05:00", "2026-03-08T03:00:00-04:00"},
		{"New York skipped time next day", "0 30 2 * * *", newYork, "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"},
		{"New York quarter hours merge in the jump", "0 */15 * * * *", newYork, "2026-03-08T01:50:00-05:00", "2026-03-08T03:00:00-04:00"},
		{"New York quarter hours after the jump", "0 */15 * * * *", newYork, "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"},
		// America/New_York falls back on 2026-11-01 at 02:00 EDT to 01:00 EST.
		{"New York repeated time fires at first pass", "0 30 1 * * *", newYork, "2026-11-01T00:00:00-04:00", "2026-11-01T01:30:00-04:00"},
		{"New York repeated time not at second pass", "0 30 1 * * *", newYork, "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"},
		{"New York quarter hours skip second pass", "0 */15 * * * *", newYork, "2026-11-01T01:45:00-04:00", "2026-11-01T02:00:00-05:00"},
		{"New York quarter hours from second pass", "0 */15 * * * *", newYork, "2026-11-01T01:05:00-05:00", "2026-11-01T02:00:00-05:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustLoad(t, tt.zone)
			after, want := mustTime(t, tt.after), mustTime(t, tt.want)
			got := mustParse(t, tt.expr).Next(after, loc)
			if !got.Equal(want) {
				t.Errorf("%q in %s: Next(%s) = %s, want %s", tt.expr, tt.zone,
					after.In(loc).Format(time.RFC3339Nano), got.Format(time.RFC3339), want.In(loc).Format(time.RFC3339))
			}
			if got.Location() != loc {
				t.Errorf("Next returned a time in %v, want %v", got.Location(), loc)
			}
			if _, off := got.Zone(); got.Format(time.RFC3339) != want.In(loc).Format(time.RFC3339) || off != offsetOf(want) {
				t.Errorf("Next = %s, want local reading %s", got.Format(time.RFC3339), tt.want)
			}
		})
	}
}

func offsetOf(t time.Time) int {
	_, off := t.Zone()
	return off
}

func TestNextNilLocationIsUTC(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "0 0 8 * * *")
	after := mustTime(t, "2026-01-15T09:00:00+01:00")
	got := s.Next(after, nil)
	if want := mustTime(t, "2026-01-16T08:00:00Z"); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Next(%v, nil) = %v, want %v", after, got, want)
	}
}

func TestZeroScheduleNeverFires(t *testing.T) {
	t.Parallel()
	var s Schedule
	if got := s.Next(mustTime(t, "2026-01-15T00:00:00Z"), time.UTC); !got.IsZero() {
		t.Errorf("zero Schedule: Next = %v, want the zero Time", got)
	}
	if got := s.MinGap(); got != 0 {
		t.Errorf("zero Schedule: MinGap = %v, want 0", got)
	}
}

func BenchmarkNext(b *testing.B) {
	prague := mustLoad(b, "Europe/Prague")
	benchmarks := []struct {
		name string
		expr string
		loc  *time.Location
	}{
		{"every5min/UTC", "0 0/5 * * * *", time.UTC},
		{"weekdays8am/UTC", "0 0 8 * * MON-FRI", time.UTC},
		{"hourly/UTC", "0 0 * * * *", time.UTC},
		{"monthly31st/UTC", "0 0 0 31 * *", time.UTC},
		{"friday13th/UTC", "0 0 0 13 * FRI", time.UTC},
		{"every5min/Prague", "0 0/5 * * * *", prague},
		{"weekdays8am/Prague", "0 0 8 * * MON-FRI", prague},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			s := mustParse(b, bm.expr)
			start := time.Date(2026, 1, 15, 10, 2, 30, 0, time.UTC)
			t := start
			for b.Loop() {
				t = s.Next(t, bm.loc)
				if t.Year() > 2100 {
					t = start
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("0 0/5 8-18 ? * MON-FRI"); err != nil {
			b.Fatal(err)
		}
	}
}
