package notify

import (
	"strconv"
	"sync"
	"time"
)

// limiter lets each key through once per every: send now per subscription,
// a test message per owner.
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

// giveBack undoes the take of key at at, when no later take followed: the
// action it let through did nothing.
func (l *limiter) giveBack(key string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last[key].Equal(at) {
		delete(l.last, key)
	}
}

// tooSoon is the refusal of a limited action, message taking the key and
// the seconds to wait.
func tooSoon(wait time.Duration, message, key string) *Error {
	secs := strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	return &Error{Code: TooSoon, RetryAfter: wait, Message: message, Params: []string{key, secs}}
}

// claim is one budget a send on demand spends from: its key, how many sends
// the key may spend an hour, and what the refusal calls it.
type claim struct {
	key     string
	perHour int // 0: no bound
	what    string
}

// budgets count the sends on demand (send now, channel tests, confirmations
// of recipients) of each key, an owner or a project, in the last hour: a key
// may spend at most perHour in any hour.
type budgets struct {
	mu     sync.Mutex
	sent   map[string][]time.Time // per key, the times of its sends in the last hour, oldest first
	pruned time.Time
}

func newBudgets() *budgets { return &budgets{sent: map[string][]time.Time{}} }

// recent returns the sends of key within the hour before now, dropping the older.
func (b *budgets) recent(key string, now time.Time) []time.Time {
	times := b.sent[key]
	i := 0
	for i < len(times) && !times[i].After(now.Add(-time.Hour)) {
		i++
	}
	times = times[i:]
	b.sent[key] = times
	return times
}

// take spends one send from every claim's budget at now, or from none when
// one of them is spent: then it returns that claim and how long until it
// has a send again.
func (b *budgets) take(now time.Time, claims ...claim) (spent claim, wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range claims {
		if c.perHour <= 0 {
			continue
		}
		if times := b.recent(c.key, now); len(times) >= c.perHour {
			return c, max(times[len(times)-c.perHour].Add(time.Hour).Sub(now), time.Second), false
		}
	}
	for _, c := range claims {
		if c.perHour > 0 {
			b.sent[c.key] = append(b.sent[c.key], now)
		}
	}
	b.prune(now)
	return claim{}, 0, true
}

// refund gives back the send take spent last, when what it was for did not go.
func (b *budgets) refund(claims ...claim) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range claims {
		if times := b.sent[c.key]; c.perHour > 0 && len(times) > 0 {
			b.sent[c.key] = times[:len(times)-1]
		}
	}
}

// prune forgets, once a minute, the keys that sent nothing in the last hour.
func (b *budgets) prune(now time.Time) {
	if now.Sub(b.pruned) < time.Minute {
		return
	}
	b.pruned = now
	for k := range b.sent {
		if len(b.recent(k, now)) == 0 {
			delete(b.sent, k)
		}
	}
}

// overBudget is the refusal of a send on demand whose budget is spent.
func overBudget(c claim, wait time.Duration) *Error {
	secs := strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	return &Error{Code: TooSoon, RetryAfter: wait,
		Message: "Send budget spent: at most %s sends on demand (send now, channel tests, confirmations) an hour %s; the next may go in %s s",
		Params:  []string{strconv.Itoa(c.perHour), c.what, secs}}
}

// ownerBudget and projectBudget are the claims of a send on demand by owner,
// in a project for send now.
func (s *Service) ownerBudget(owner string) claim {
	return claim{key: "owner\x00" + owner, perHour: s.cfg.SendNowPerHour, what: "per user"}
}

func (s *Service) projectBudget(projectID string) claim {
	return claim{key: "project\x00" + projectID, perHour: s.cfg.ProjectSendNowPerHour, what: "per project"}
}

// spend takes one send on demand from the claims' budgets, or refuses with
// TooSoon and when the next may go.
func (s *Service) spend(now time.Time, claims ...claim) error {
	if c, wait, ok := s.budgets.take(now, claims...); !ok {
		return overBudget(c, wait)
	}
	return nil
}
