package notify

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/heraldhq/herald/store"
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

// claim is one budget a send on demand spends from, and what the refusal
// calls it.
type claim struct {
	store.Budget
	what string
}

// overBudget is the refusal of a send on demand whose budget is spent.
func overBudget(c claim, wait time.Duration) *Error {
	secs := strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	return &Error{Code: TooSoon, RetryAfter: wait,
		Message: "Send budget spent: at most %s sends on demand (send now, channel tests, confirmations) an hour %s; the next may go in %s s",
		Params:  []string{strconv.Itoa(c.PerHour), c.what, secs}}
}

// ownerBudget and projectBudget are the claims of a send on demand by owner,
// in a project for send now.
func (s *Service) ownerBudget(owner string) claim {
	return claim{store.Budget{Key: "owner\x00" + owner, PerHour: s.cfg.SendNowPerHour}, "per user"}
}

func (s *Service) projectBudget(projectID string) claim {
	return claim{store.Budget{Key: "project\x00" + projectID, PerHour: s.cfg.ProjectSendNowPerHour}, "per project"}
}

// spend takes one send on demand at now from the claims' budgets, or
// refuses with TooSoon and when the next may go. The budgets are kept in the
// store: a restart, or a control process that takes over, goes on counting.
func (s *Service) spend(ctx context.Context, now time.Time, claims ...claim) (store.Spend, error) {
	budgets := make([]store.Budget, len(claims))
	for i, c := range claims {
		budgets[i] = c.Budget
	}
	spend, err := s.st.SpendBudgets(ctx, now, budgets...)
	if spent, ok := errors.AsType[*store.BudgetSpentError](err); ok {
		return nil, overBudget(claims[spent.Budget], spent.Wait)
	}
	return spend, err
}

// refund gives back a spend whose send did not go. A refund that fails
// leaves the send counted, which is logged.
func (s *Service) refund(ctx context.Context, spend store.Spend) {
	if err := s.st.RefundBudgets(context.WithoutCancel(ctx), spend); err != nil {
		s.log.Warn("a send on demand that did not go is still counted against its budget", "err", err)
	}
}
