package cron

import (
	"fmt"
	"testing"
	"time"
)

func zoned(t testing.TB, tz string, exprs ...string) []Zoned {
	t.Helper()
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	var zs []Zoned
	for _, e := range exprs {
		s, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		zs = append(zs, Zoned{s, loc})
	}
	return zs
}

func TestUnionGap(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	year := 366 * 24 * time.Hour
	var every3s []string
	for s := 0; s < 60; s += 3 {
		every3s = append(every3s, fmt.Sprintf("%d * * * * *", s))
	}
	tests := []struct {
		name  string
		zs    []Zoned
		want  time.Duration
		whole bool
	}{
		{"one trigger", zoned(t, "UTC", "0 0 9 * * *"), 24 * time.Hour, true},
		{"twenty minutely triggers three seconds apart", zoned(t, "UTC", every3s...), 3 * time.Second, false},
		{"the same instant twice is one fire", zoned(t, "UTC", "0 0 9 * * *", "0 0 9 * * MON"), 24 * time.Hour, true},
		{"morning and evening", zoned(t, "UTC", "0 0 9 * * *", "0 0 21 * * *"), 12 * time.Hour, true},
		// The 1st of the month is a Monday only now and then; the gap shows when it is.
		{"monthly meets weekly", zoned(t, "UTC", "0 0 9 1 * *", "30 0 9 * * MON"), 30 * time.Second, true},
		{"zones meet", append(zoned(t, "Europe/Prague", "0 0 10 * * *"), zoned(t, "UTC", "20 0 9 * * *")...), 20 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, whole := UnionGap(tt.zs, from, year, 100_000)
			if got != tt.want || whole != tt.whole {
				t.Fatalf("UnionGap = %s, complete %v; want %s, %v", got, whole, tt.want, tt.whole)
			}
		})
	}
}

func BenchmarkUnionGap(b *testing.B) {
	var exprs []string
	for s := 0; s < 60; s += 3 {
		exprs = append(exprs, fmt.Sprintf("%d 0 * * * *", s))
	}
	zs := zoned(b, "Europe/Prague", exprs...)
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		UnionGap(zs, from, 366*24*time.Hour, 100_000)
	}
}
