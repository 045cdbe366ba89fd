package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// claimQueued claims n runs of sub from at on, one second apart, and finishes
// them as queued (handed over, deliveries pending); the first final of them
// are finished final instead.
func claimQueued(t testing.TB, s *Store, sub string, at time.Time, n, final int) {
	t.Helper()
	ctx := context.Background()
	runs := make([]Run, n)
	fins := make([]Finish, n)
	for i := range runs {
		when := at.Add(time.Duration(i) * time.Second)
		runs[i] = Run{ID: fmt.Sprintf("r%07d", i), SubscriptionID: sub, ScheduledAt: when, State: RunRunning, Started: when}
		fins[i] = Finish{Run: runs[i]}
		fins[i].Run.State, fins[i].Run.Finished = RunQueued, when
		if i < final {
			fins[i].Run.State = RunNotTriggered
		}
	}
	if _, err := s.ClaimRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRuns(ctx, fins, at); err != nil {
		t.Fatal(err)
	}
}

// TestUnratedRunsAreFinalOnly: the health roll-up reads the final runs not
// yet rated, and none still queued, through the index of exactly those, so
// that a burst of queued runs costs it nothing to step over.
func TestUnratedRunsAreFinalOnly(t *testing.T) {
	t.Parallel()
	s, sub := openLedgerStore(t)
	claimQueued(t, s, sub, ledgerT0, 50, 3)
	runs, err := s.UnratedRuns(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("unrated runs = %d, want the 3 final ones", len(runs))
	}
	var indexSQL string
	if err := s.r.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'runs_unrated'`).Scan(&indexSQL); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(indexSQL, "state NOT IN ('running', 'queued')") {
		t.Fatalf("runs_unrated holds runs that are not final: %s", indexSQL)
	}
	plan, err := s.r.Query(`EXPLAIN QUERY PLAN `+unratedRunsQuery, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	var steps []string
	for plan.Next() {
		var id, parent, unused int
		var detail string
		if err := plan.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if len(steps) != 1 || steps[0] != "SCAN runs USING INDEX runs_unrated" {
		t.Fatalf("plan = %q, want one scan of runs_unrated in its order", steps)
	}
}

// BenchmarkUnratedRunsAfterABurst reads the unrated runs while 20,000 runs of
// a burst are still queued.
func BenchmarkUnratedRunsAfterABurst(b *testing.B) {
	s, sub := openLedgerStore(b)
	claimQueued(b, s, sub, ledgerT0, 20_000, 100)
	for b.Loop() {
		if runs, err := s.UnratedRuns(context.Background(), 2000); err != nil || len(runs) != 100 {
			b.Fatal(len(runs), err)
		}
	}
}
