package latency

import (
	"encoding/json"
	"math/bits"
	"time"
)

// subBits sets the histogram's precision: each power of two of nanoseconds
// is split into 1<<subBits buckets, so a bucket is at most 1/32 (3 %) wide.
const subBits = 5

// nBuckets covers every int64 count of nanoseconds.
const nBuckets = (64 - subBits) << subBits

// Histogram counts latencies in log-linear buckets: exact below 32 ns, then
// 32 buckets per doubling. The zero value is empty and ready to use.
type Histogram struct {
	counts [nBuckets]int64
	total  int64
}

// bucketOf is the index of the bucket that holds ns.
func bucketOf(ns int64) int {
	if ns < 1<<subBits {
		return int(max(ns, 0))
	}
	shift := bits.Len64(uint64(ns)) - subBits - 1
	return shift<<subBits + int(ns>>shift)
}

// bounds are the lowest and highest nanoseconds bucket i holds.
func bounds(i int) (low, high int64) {
	if i < 1<<subBits {
		return int64(i), int64(i)
	}
	shift := i>>subBits - 1
	m := int64(i - shift<<subBits)
	return m << shift, (m+1)<<shift - 1
}

// Record counts one latency.
func (h *Histogram) Record(d time.Duration) {
	h.counts[bucketOf(int64(d))]++
	h.total++
}

// Merge adds o's counts to h's.
func (h *Histogram) Merge(o *Histogram) {
	for i, n := range o.counts {
		h.counts[i] += n
	}
	h.total += o.total
}

// Quantile is the latency below which a fraction q of the counts lie: the
// middle of the bucket that holds it, or 0 when h is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := int64(q*float64(h.total-1)) + 1
	var seen int64
	for i, n := range h.counts {
		seen += n
		if seen >= rank {
			low, high := bounds(i)
			return time.Duration(low + (high-low)/2)
		}
	}
	return 0
}

// bucket is one non-empty bucket of a histogram as it travels in JSON.
type bucket struct {
	LowNS  int64 `json:"low_ns"`
	HighNS int64 `json:"high_ns"`
	N      int64 `json:"n"`
}

// MarshalJSON writes the non-empty buckets with their bounds.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	bs := []bucket{}
	for i, n := range h.counts {
		if n > 0 {
			low, high := bounds(i)
			bs = append(bs, bucket{LowNS: low, HighNS: high, N: n})
		}
	}
	return json.Marshal(bs)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var bs []bucket
	if err := json.Unmarshal(b, &bs); err != nil {
		return err
	}
	*h = Histogram{}
	for _, x := range bs {
		h.counts[bucketOf(x.LowNS)] += x.N
		h.total += x.N
	}
	return nil
}
