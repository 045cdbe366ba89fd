package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// TestFinishRunsWritesEveryState finishes, in one batch, two runs of one subscription
// and one of another: each subscription ends with the condition of its last run in the
// batch, not only the first run's; the health fields are the roll-up's and stay.
func TestFinishRunsWritesEveryState(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestPruneKeepsPendingDeliveries: pruning removes the old runs whose
// deliveries are all final, with their deliveries, and keeps an old run with a
// delivery still to send, whose instant PendingInstants names.
func TestPruneKeepsPendingDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	sent := enqueue(t, s, sub, ledgerT0, "c1", "c2")
	failed := enqueue(t, s, sub, ledgerT0.Add(time.Hour), "c1")
	pending := enqueue(t, s, sub, ledgerT0.Add(2*time.Hour), "c1", "c2")
	recent := enqueue(t, s, sub, ledgerT0.Add(48*time.Hour), "c1")
	if _, err := s.MarkSentBatch(ctx, []SentMark{{ID: sent.ID + "-c1"}, {ID: sent.ID + "-c2"}, {ID: pending.ID + "-c1"}}, ledgerT0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkFailed(ctx, failed.ID+"-c1", "refused", ledgerT0); err != nil {
		t.Fatal(err)
	}
	limit := ledgerT0.Add(24 * time.Hour)
	at, err := s.PendingInstants(ctx, limit)
	if err != nil || !maps.Equal(at, map[int64]bool{pending.ScheduledAt.Unix(): true}) {
		t.Fatalf("pending instants = %v, %v; want the pending run's", at, err)
	}
	n, err := s.PruneRuns(ctx, limit)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d runs, %v; want the sent and the failed one", n, err)
	}
	runs, err := s.SubscriptionRuns(ctx, sub, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if want := []string{pending.ID, recent.ID}; !slices.Equal(ids, want) {
		t.Fatalf("runs left %v, want %v", ids, want)
	}
	if d, err := s.Delivery(ctx, pending.ID+"-c2"); err != nil || d.State != DeliveryPending {
		t.Fatalf("the pending delivery after pruning: %+v, %v", d, err)
	}
	if _, err := s.Delivery(ctx, sent.ID+"-c1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a pruned run's delivery: %v", err)
	}
}

// TestClaimRunsClaimsEachInstantOnce claims, in one batch of more runs
// than one statement takes, instants never claimed, one claimed by an
// earlier batch, one twice in the batch, and one of a subscription deleted
// since it fired: only the first claim of each instant of a subscription
// that exists is claimed, and only those are stored.
func TestClaimRunsClaimsEachInstantOnce(t *testing.T) {
	t.Parallel()
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	run := func(id, sid string, at int) Run {
		return Run{ID: id, SubscriptionID: sid, ScheduledAt: ledgerT0.Add(time.Duration(at) * time.Minute), State: RunRunning,
			Started: ledgerT0, Incarnation: "i1"}
	}
	if got, err := s.ClaimRuns(ctx, []Run{run("early", sub, 7)}); err != nil || !slices.Equal(got, []bool{true}) {
		t.Fatalf("first claim: %v, %v", got, err)
	}
	var runs []Run
	var want []bool
	for i := range 2*claimRows + 3 {
		runs, want = append(runs, run(fmt.Sprintf("r%03d", i), sub, i)), append(want, i != 7)
	}
	runs, want = append(runs, run("again", sub, 20), run("gone", "deleted", 1)), append(want, false, false)
	got, err := s.ClaimRuns(ctx, runs)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("claimed %v, %v; want %v", got, err, want)
	}
	stored, err := s.RunningRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(stored))
	for i, r := range stored {
		ids[i] = r.ID
		if r.Incarnation != "i1" || r.State != RunRunning {
			t.Errorf("stored %+v", r)
		}
	}
	slices.Sort(ids)
	wantIDs := []string{"early"}
	for i, r := range runs {
		if want[i] {
			wantIDs = append(wantIDs, r.ID)
		}
	}
	slices.Sort(wantIDs)
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("stored runs %v, want %v", ids, wantIDs)
	}
}
