package main

import (
	"cmp"
	"fmt"
	"log"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// histogram is a Prometheus histogram as scraped: cumulative counts by upper
// bound, in the order exposed (ascending, +Inf last).
type histogram struct {
	bounds []float64
	counts []float64
	count  int
}

// latenessMetric is the scheduler's histogram of how late it handed fires over.
const latenessMetric = "herald_scheduler_lateness_seconds"

// scrapeLateness reads the lateness histogram from Herald's /metrics.
func scrapeLateness(opsURL string) histogram {
	m, err := apptest.Metrics(opsURL)
	if err != nil {
		log.Fatal(err)
	}
	type bucket struct{ bound, count float64 }
	var buckets []bucket
	for le, n := range apptest.ByLabel(m, latenessMetric+"_bucket", "le") {
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			log.Fatalf("%s bucket le=%q", latenessMetric, le)
		}
		buckets = append(buckets, bucket{bound, n})
	}
	if len(buckets) == 0 {
		log.Fatalf("no %s at %s", latenessMetric, opsURL)
	}
	slices.SortFunc(buckets, func(a, b bucket) int { return cmp.Compare(a.bound, b.bound) })
	var h histogram
	for _, b := range buckets {
		h.bounds, h.counts = append(h.bounds, b.bound), append(h.counts, b.count)
	}
	h.count = int(h.counts[len(h.counts)-1])
	return h
}

// minus is h without what earlier had counted.
func (h histogram) minus(earlier histogram) histogram {
	out := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts))}
	for i := range h.counts {
		out.counts[i] = h.counts[i] - earlier.counts[i]
	}
	out.count = int(out.counts[len(out.counts)-1])
	return out
}

// p99 is the upper bound of the bucket the 99th percentile falls in, as
// "≤ 5ms".
func (h histogram) p99() string { return h.quantile(0.99) }

// max is the upper bound of the highest bucket holding a fire.
func (h histogram) max() string { return h.quantile(1) }

func (h histogram) quantile(q float64) string {
	if h.count == 0 {
		return "-"
	}
	for i, c := range h.counts {
		if c >= q*float64(h.count) {
			if math.IsInf(h.bounds[i], 1) {
				return fmt.Sprintf("> %s", time.Duration(h.bounds[i-1]*float64(time.Second)))
			}
			return fmt.Sprintf("≤ %s", time.Duration(h.bounds[i]*float64(time.Second)))
		}
	}
	return "-"
}
