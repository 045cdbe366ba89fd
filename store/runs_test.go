package store

import (
	"context"
	"testing"
	"time"
)

// TestFinishRunsWritesEveryState finishes, in one batch, two runs of one subscription
// and one of another: each subscription ends with the condition of its last run in the
// batch, not only the first run's; the health fields are the roll-up's and stay.
func TestFinishRunsWritesEveryState(t *testing.T) {
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	if err := s.CreateSubscription(ctx, Subscription{ID: "s2", ProjectID: "p1", Owner: "u1", Title: "S2", Enabled: true,
		Created: ledgerT0, Updated: ledgerT0}, Quota{}); err != nil {
		t.Fatal(err)
	}
	var fins []Finish
	yes, no := true, false
	states := []SubscriptionState{{LastCondition: &yes, Failures: 1}, {LastCondition: &no, Failures: 2}, {LastCondition: &yes, Failures: 3, Unhealthy: true}}
	for i, sid := range []string{sub, sub, "s2"} {
		run := Run{ID: "r" + string(rune('0'+i)), SubscriptionID: sid, ScheduledAt: ledgerT0.Add(time.Duration(i) * time.Hour),
			State: RunRunning, Started: ledgerT0}
		if err := s.ClaimRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		run.State, run.Finished = RunFailed, ledgerT0
		fins = append(fins, Finish{Run: run, State: &states[i]})
	}
	if err := s.FinishRuns(ctx, fins, ledgerT0); err != nil {
		t.Fatal(err)
	}
	for sid, want := range map[string]SubscriptionState{sub: states[1], "s2": states[2]} {
		got, err := s.State(ctx, sid)
		if err != nil || got.LastCondition == nil || *got.LastCondition != *want.LastCondition || got.Failures != 0 || got.Unhealthy {
			t.Errorf("state of %s = %+v (%v), want %+v", sid, got, err, want)
		}
	}
}
