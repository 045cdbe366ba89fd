package notify

import (
	"strconv"
	"sync"
	"time"
)

// limiter lets each key through once per every: send now per subscription,
// a test message per channel.
type limiter struct {
	mu    sync.Mutex
	every time.Duration
	last  map[string]time.Time
}

func newLimiter(every time.Duration) *limiter {
	return &limiter{every: every, last: map[string]time.Time{}}
}

// take records key at now, or returns how long until it may go again.
func (l *limiter) take(key string, now time.Time) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if last, seen := l.last[key]; seen {
		if wait := l.every - now.Sub(last); wait > 0 {
			return wait, false
		}
	}
	l.last[key] = now
	for k, t := range l.last { // forget what no longer limits anything
		if now.Sub(t) >= l.every && k != key {
			delete(l.last, k)
		}
	}
	return 0, true
}

// tooSoon is the refusal of a limited action, message taking the key and
// the seconds to wait.
func tooSoon(wait time.Duration, message, key string) *Error {
	secs := strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	return &Error{Code: TooSoon, RetryAfter: wait, Message: message, Params: []string{key, secs}}
}
