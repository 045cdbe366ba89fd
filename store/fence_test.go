package store

import (
	"context"
	"errors"
	"testing"
)

// TestFenceRefusesEveryCommit: while the fence says no, no write commits,
// whether a transaction (a claim of runs) or a single statement (a domain
// created), and what was there stays; once it says yes again, writes commit.
func TestFenceRefusesEveryCommit(t *testing.T) {
	t.Parallel()
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	lost := errors.New("lost the lease to B")
	s.Fence(func() error { return lost })
	claimed, err := s.ClaimRuns(ctx, []Run{{ID: "r1", SubscriptionID: sub, ScheduledAt: ledgerT0, State: RunRunning, Started: ledgerT0}})
	if !errors.Is(err, ErrFenced) || !errors.Is(err, lost) {
		t.Errorf("claim behind the fence: %v (claimed %v), want ErrFenced naming the reason", err, claimed)
	}
	if err := s.EnsureDomain(ctx, "other", ledgerT0); err == nil {
		t.Error("a single statement committed behind the fence")
	}
	if runs, err := s.RunningRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("running runs after the refused claim: %v, %v", runs, err)
	}
	if ok, err := s.DomainExists(ctx, "other"); err != nil || ok {
		t.Errorf("the domain refused by the fence exists: %v, %v", ok, err)
	}
	s.Fence(func() error { return nil })
	if _, err := s.ClaimRuns(ctx, []Run{{ID: "r1", SubscriptionID: sub, ScheduledAt: ledgerT0, State: RunRunning, Started: ledgerT0}}); err != nil {
		t.Fatalf("claim with the fence open: %v", err)
	}
	s.Fence(nil)
	if err := s.EnsureDomain(ctx, "other", ledgerT0); err != nil {
		t.Fatalf("write without a fence: %v", err)
	}
	if runs, err := s.RunningRuns(ctx); err != nil || len(runs) != 1 {
		t.Errorf("running runs: %v, %v; want the one claimed with the fence open", runs, err)
	}
}

// TestDataVersions: each project with a model has its data version, which a
// data load increases.
func TestDataVersions(t *testing.T) {
	t.Parallel()
	s, _ := openLedgerStore(t)
	ctx := context.Background()
	if v, err := s.DataVersions(ctx); err != nil || len(v) != 0 {
		t.Fatalf("before any model: %v, %v", v, err)
	}
	if _, err := s.SaveModel(ctx, ModelChange{ProjectID: "p1", Doc: []byte(`{}`), By: "u1", At: ledgerT0}, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BumpDataVersion(ctx, "p1", ledgerT0, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if v, err := s.DataVersions(ctx); err != nil || v["p1"] != 2 || len(v) != 1 {
		t.Errorf("after a model and a load: %v, %v; want p1 at 2", v, err)
	}
}
