package store

import (
	"context"
	"fmt"
	"slices"
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

// TestFinishRunsHandsOverABurst finishes a batch whose deliveries take more
// than one statement: every delivery of a run still claimed is written with
// its payload and outbox row, in the runs' order; a run deleted meanwhile
// hands over nothing.
func TestFinishRunsHandsOverABurst(t *testing.T) {
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	const n = 150
	var fins []Finish
	var want []string
	for i := range n {
		run := Run{ID: fmt.Sprintf("r%03d", i), SubscriptionID: sub, ScheduledAt: ledgerT0.Add(time.Duration(i) * time.Hour),
			State: RunRunning, Started: ledgerT0}
		if err := s.ClaimRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		run.State, run.Finished = RunQueued, ledgerT0
		f := Finish{Run: run}
		for c := range 2 {
			d := Delivery{ID: fmt.Sprintf("%s-c%d", run.ID, c), ChannelID: fmt.Sprintf("c%d", c), Kind: "email",
				Payload: Payload{Subject: "Revenue", Text: run.ID}}
			f.Deliveries = append(f.Deliveries, d)
			if i != 70 {
				want = append(want, d.ID)
			}
		}
		fins = append(fins, f)
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM runs WHERE id = 'r070'`); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRuns(ctx, fins, ledgerT0); err != nil {
		t.Fatal(err)
	}
	items, err := s.Outbox(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.DeliveryID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("outbox holds %d deliveries, want %d in the runs' order:\n%v", len(got), len(want), got)
	}
	for _, id := range []string{"r000-c0", "r149-c1"} {
		d, err := s.Delivery(ctx, id)
		if err != nil || d.State != DeliveryPending || d.Payload.Text != id[:4] || d.RunID != id[:4] {
			t.Errorf("delivery %s = %+v (%v)", id, d, err)
		}
	}
}
