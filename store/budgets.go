package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Budget bounds the sends on demand of one key (an owner, a project): at
// most PerHour in any hour; 0 or less bounds nothing.
type Budget struct {
	Key     string
	PerHour int
}

// BudgetSpentError is SpendBudgets' refusal: Budgets[Budget] has spent its
// hour, and has a send again after Wait.
type BudgetSpentError struct {
	Budget int
	Wait   time.Duration
}

func (e *BudgetSpentError) Error() string {
	return fmt.Sprintf("budget %d spent for another %v", e.Budget, e.Wait)
}

// Spend is what one SpendBudgets recorded, for RefundBudgets.
type Spend []int64

// SpendBudgets records one send at now against each of budgets, in one
// transaction, or, when one of them has had PerHour sends in the hour before
// now, records nothing and returns a *BudgetSpentError naming the first such.
// The sends of more than an hour ago are forgotten. Budgets that bound
// nothing ask nothing of the database.
func (s *Store) SpendBudgets(ctx context.Context, now time.Time, budgets ...Budget) (Spend, error) {
	if !slices.ContainsFunc(budgets, func(b Budget) bool { return b.PerHour > 0 }) {
		return nil, nil
	}
	var spend Spend
	err := s.tx(ctx, func(tx *sql.Tx) error {
		since := now.Add(-time.Hour).UnixNano()
		if _, err := tx.ExecContext(ctx, `DELETE FROM send_budget_spends WHERE at <= ?`, since); err != nil {
			return fmt.Errorf("spend budgets: %w", err)
		}
		for i, b := range budgets {
			if b.PerHour <= 0 {
				continue
			}
			// The PerHour-th latest send of the hour, if there is one, spent
			// the budget until it is an hour old.
			var at int64
			err := tx.QueryRowContext(ctx, `SELECT at FROM send_budget_spends WHERE key = ? AND at > ?
				ORDER BY at DESC LIMIT 1 OFFSET ?`, b.Key, since, b.PerHour-1).Scan(&at)
			switch {
			case err == nil:
				wait := time.Unix(0, at).Add(time.Hour).Sub(now)
				return &BudgetSpentError{Budget: i, Wait: max(wait, time.Second)}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("spend budgets: %w", err)
			}
		}
		for _, b := range budgets {
			if b.PerHour <= 0 {
				continue
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO send_budget_spends (key, at) VALUES (?, ?)`, b.Key, now.UnixNano())
			if err != nil {
				return fmt.Errorf("spend budgets: %w", err)
			}
			id, err := res.LastInsertId()
			if err != nil {
				return fmt.Errorf("spend budgets: %w", err)
			}
			spend = append(spend, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return spend, nil
}

// RefundBudgets gives back what spend recorded, when what it was for did
// not go.
func (s *Store) RefundBudgets(ctx context.Context, spend Spend) error {
	if len(spend) == 0 {
		return nil
	}
	args := make([]any, len(spend))
	for i, id := range spend {
		args[i] = id
	}
	_, err := s.w.ExecContext(ctx, `DELETE FROM send_budget_spends WHERE rowid IN (`+placeholders(len(spend))+`)`, args...)
	if err != nil {
		return fmt.Errorf("refund budgets: %w", err)
	}
	return nil
}
