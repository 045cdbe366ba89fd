package latency

import (
	"encoding/json"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for ns := int64(0); ns < 1<<20; ns++ {
		i := bucketOf(ns)
		if i != prev && i != prev+1 {
			t.Fatalf("bucketOf(%d) = %d after %d", ns, i, prev)
		}
		if low, high := bounds(i); ns < low || ns > high {
			t.Fatalf("%d is in bucket %d, [%d, %d]", ns, i, low, high)
		}
		prev = i
	}
	if i := bucketOf(1<<63 - 1); i >= nBuckets {
		t.Fatalf("the longest latency is in bucket %d of %d", i, nBuckets)
	}
}

func TestHistogramQuantileAndJSON(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	b, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != h {
		t.Fatal("the Histogram changed on its way through JSON")
	}
	for q, want := range map[float64]time.Duration{0.5: 500 * time.Microsecond, 0.99: 990 * time.Microsecond} {
		got := back.Quantile(q)
		if diff := got - want; diff < -want/32 || diff > want/32 {
			t.Errorf("quantile(%v) = %v; want %v within 3 %%", q, got, want)
		}
	}
}
