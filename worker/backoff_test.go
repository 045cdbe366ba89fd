package worker

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	highest := func(n int64) int64 { return n - 1 }
	lowest := func(int64) int64 { return 0 }
	tests := []struct {
		name      string
		attempt   int
		base, cap time.Duration
		rnd       func(int64) int64
		want      time.Duration
	}{
		{name: "first attempt at most base", attempt: 1, base: time.Second, cap: time.Minute, rnd: highest, want: time.Second},
		{name: "doubles", attempt: 3, base: time.Second, cap: time.Minute, rnd: highest, want: 4 * time.Second},
		{name: "capped", attempt: 7, base: time.Second, cap: time.Minute, rnd: highest, want: time.Minute},
		{name: "huge attempt stays capped", attempt: 500, base: time.Second, cap: time.Minute, rnd: highest, want: time.Minute},
		{name: "full jitter reaches zero", attempt: 4, base: time.Second, cap: time.Minute, rnd: lowest, want: 0},
		{name: "attempt below one counts as first", attempt: 0, base: time.Second, cap: time.Minute, rnd: highest, want: time.Second},
		{name: "zero base", attempt: 3, base: 0, cap: time.Minute, rnd: highest, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := backoff(tt.attempt, tt.base, tt.cap, tt.rnd); got != tt.want {
				t.Errorf("backoff(%d, %v, %v) = %v, want %v", tt.attempt, tt.base, tt.cap, got, tt.want)
			}
		})
	}
}

func TestBackoffDrawsBelowCeiling(t *testing.T) {
	t.Parallel()
	var asked int64
	rnd := func(n int64) int64 { asked = n; return n / 2 }
	if got := backoff(2, 10*time.Millisecond, time.Second, rnd); got != 10*time.Millisecond {
		t.Errorf("got %v, want half of the 20ms ceiling", got)
	}
	if asked != int64(20*time.Millisecond)+1 {
		t.Errorf("drew from [0, %d), want [0, 20ms] inclusive", asked)
	}
}
