package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestRecentForgetsWhatExpired: entries older than the ttl are dropped as
// new ones come, not kept until the map is full, and what is still fresh
// is served without a load.
func TestRecentForgetsWhatExpired(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecent[int, int](time.Second)
		for i := range 1000 {
			r.put(i, i, nil)
		}
		time.Sleep(2 * time.Second)
		r.put(-1, -1, nil)
		if n := len(r.m); n != 1 {
			t.Fatalf("%d entries after the others expired, want 1", n)
		}
		loads := 0
		v, err := r.get(context.Background(), -1, func(context.Context) (int, error) { loads++; return 0, nil })
		if v != -1 || err != nil || loads != 0 {
			t.Fatalf("fresh entry: got %d, %v after %d loads; want -1 from memory", v, err, loads)
		}
	})
}
