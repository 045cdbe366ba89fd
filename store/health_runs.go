package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// UnratedRuns lists, in the order they became final, up to limit runs in a
// final state whose outcome has not yet counted toward their subscription's health.
func (s *Store) UnratedRuns(ctx context.Context, limit int) ([]Run, error) {
	out, err := queryAll(ctx, s.r, scanRun, `SELECT id, subscription_id, scheduled_at, state, detail, error, started, finished
		FROM runs WHERE rated = 0 AND state NOT IN ('running', 'queued') ORDER BY finished, rowid LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("unrated runs: %w", err)
	}
	return out, nil
}

// Rating is a run's outcome counted toward its subscription's health: the
// subscription's failures in a row and health after it, and the notice to
// hand over with it when it made the subscription unhealthy.
type Rating struct {
	Run       Run
	Failures  int
	Unhealthy bool
	Notice    []Delivery
}

// RateRuns records ratings in one transaction: each subscription's health,
// the notices with their outbox rows, and each run counted. A run deleted
// meanwhile is passed over.
func (s *Store) RateRuns(ctx context.Context, ratings []Rating, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, r := range ratings {
			res, err := tx.ExecContext(ctx, `UPDATE runs SET rated = 1 WHERE id = ? AND rated = 0`, r.Run.ID)
			if err != nil {
				return fmt.Errorf("rate run: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO subscription_state(subscription_id, failures, unhealthy, updated)
				VALUES (?, ?, ?, ?) ON CONFLICT (subscription_id) DO UPDATE SET failures = excluded.failures,
				unhealthy = excluded.unhealthy, updated = excluded.updated`,
				r.Run.SubscriptionID, r.Failures, boolInt(r.Unhealthy), now.Unix()); err != nil {
				return fmt.Errorf("rate run: %w", err)
			}
			for _, d := range r.Notice {
				if err := insertDelivery(ctx, tx, r.Run, d); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
