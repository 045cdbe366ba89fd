package worker

import (
	"math"
	"time"
)

// backoff is the delay before the retry that follows the given failed
// attempt (1 for the first): a uniform draw from [0, min(cap, base·2^(attempt-1))],
// "full jitter", so that deliveries failing together do not retry together.
// rnd returns a uniform value in [0, n).
func backoff(attempt int, base, cap time.Duration, rnd func(n int64) int64) time.Duration {
	ceiling := cap
	if attempt < 1 {
		attempt = 1
	}
	if shift := attempt - 1; shift < 62 && base <= cap>>shift {
		ceiling = base << shift
	}
	if ceiling <= 0 {
		return 0
	}
	n := int64(ceiling)
	if n < math.MaxInt64 {
		n++ // ceiling itself can be drawn
	}
	return time.Duration(rnd(n))
}
