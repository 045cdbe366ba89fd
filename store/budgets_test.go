package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestSpendBudgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	owner, project := Budget{Key: "owner a", PerHour: 2}, Budget{Key: "project p", PerHour: 3}
	spend := func(at time.Time, budgets ...Budget) (Spend, error) {
		t.Helper()
		return s.SpendBudgets(ctx, at, budgets...)
	}
	refused := func(err error, budget int, wait time.Duration) {
		t.Helper()
		var spent *BudgetSpentError
		if !errors.As(err, &spent) || spent.Budget != budget || spent.Wait != wait {
			t.Fatalf("got %v, want budget %d spent for %v", err, budget, wait)
		}
	}
	for i := range 2 {
		if _, err := spend(t0.Add(time.Duration(i)*time.Minute), owner, project); err != nil {
			t.Fatal(err)
		}
	}
	// The owner's third send of the hour is refused until the first is an
	// hour old, and spends nothing from the project's budget.
	_, err = spend(t0.Add(10*time.Minute), owner, project)
	refused(err, 0, 50*time.Minute)
	other := Budget{Key: "owner b", PerHour: 2}
	kept, err := spend(t0.Add(11*time.Minute), other, project)
	if err != nil {
		t.Fatal(err)
	}
	_, err = spend(t0.Add(12*time.Minute), other, project)
	refused(err, 1, 48*time.Minute)
	// A refund gives back exactly what its spend took.
	if err := s.RefundBudgets(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if _, err := spend(t0.Add(13*time.Minute), other, project); err != nil {
		t.Fatalf("after a refund: %v", err)
	}
	// A budget of 0 bounds nothing and records nothing.
	if sp, err := spend(t0.Add(14*time.Minute), Budget{Key: "owner a"}); err != nil || len(sp) != 0 {
		t.Fatalf("an unbounded budget: %v, %v", sp, err)
	}
	// The count survives the process: a store opened again goes on with it.
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = spend(t0.Add(30*time.Minute), owner)
	refused(err, 0, 30*time.Minute)
	// An hour after a send it counts no more, and is forgotten.
	if _, err := spend(t0.Add(time.Hour), owner); err != nil {
		t.Fatalf("an hour after the first send: %v", err)
	}
	var rows int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM send_budget_spends`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	// Left: owner a's and project p's sends of 9:01, owner b's and project
	// p's of 9:13, and owner a's of 10:00; those of 9:00 are forgotten.
	if rows != 5 {
		t.Errorf("%d sends kept, want 5", rows)
	}
}
