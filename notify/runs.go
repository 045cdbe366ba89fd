package notify

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/heraldhq/herald/store"
)

// Transitions is the run state machine: the states a run may move to from
// each state. A run is claimed running; the engine moves it to a final state
// or, when it hands deliveries over, to queued; the delivery ledger moves a
// queued run to its final state once no delivery is pending (Settle).
var Transitions = map[string][]string{
	store.RunRunning: {store.RunNotTriggered, store.RunSkipped, store.RunFailed, store.RunQueued},
	store.RunQueued:  {store.RunDelivered, store.RunPartiallyFailed, store.RunFailed},
}

// CanMove reports whether a run may move from one state to the other.
func CanMove(from, to string) bool { return slices.Contains(Transitions[from], to) }

// Final reports whether a run in state has reached its end.
func Final(state string) bool {
	_, moves := Transitions[state]
	return !moves
}

// Settle is the final state of a queued run whose deliveries are all final,
// from how many there are and how many of them failed. The store's ledger
// applies this rule as it records the last delivery of a run.
func Settle(total, failed int) string {
	switch {
	case failed == 0:
		return store.RunDelivered
	case failed == total:
		return store.RunFailed
	}
	return store.RunPartiallyFailed
}

// Triggers of a run, recorded in its detail: its schedule on time, a person
// sending it now, or the schedule caught up at a start after downtime (the
// run's instant says which one it stands for).
const (
	TriggerSchedule = "schedule"
	TriggerManual   = "manual"
	TriggerCatchUp  = "catch-up"
)

// SendNow runs subscription id of owner at once through the same pipeline as
// a scheduled fire, whatever its condition says, and returns the claimed
// run. One subscription may be sent now once per Config.SendNowEvery, and
// each send spends one of the owner's Config.SendNowPerHour and one of the
// project's Config.ProjectSendNowPerHour.
func (s *Service) SendNow(ctx context.Context, projectID, owner, id, by string) (store.Run, error) {
	sub, err := s.Subscription(ctx, projectID, owner, id)
	if err != nil {
		return store.Run{}, err
	}
	if reason, err := s.CannotFire(ctx, projectID, owner); err != nil {
		return store.Run{}, err
	} else if reason != "" {
		return store.Run{}, forbidden("The subscription cannot be sent: %s", reason)
	}
	sc := s.scheduler
	if sc == nil {
		return store.Run{}, errors.New("the engine is not running")
	}
	now := s.now()
	budget := []claim{s.ownerBudget(owner), s.projectBudget(projectID)}
	spent, err := s.spend(ctx, now, budget...)
	if err != nil {
		return store.Run{}, err
	}
	if wait, ok := s.sendNow.take(id, now); !ok {
		s.refund(ctx, spent)
		return store.Run{}, tooSoon(wait, "Subscription %s was sent moments ago; it may be sent again in %s s", id)
	}
	run, err := sc.SendNow(ctx, sub, by)
	if err != nil { // nothing was sent: the owner may send it again at once
		s.refund(ctx, spent)
		s.sendNow.giveBack(id, now)
	}
	if errors.Is(err, store.ErrConflict) {
		return store.Run{}, &Error{Code: TooSoon, RetryAfter: time.Second,
			Message: "Subscription %s already has a run at this second; try again", Params: []string{id}}
	}
	return run, err
}
