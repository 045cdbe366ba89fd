package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Run states set by the engine; the delivery states (queued, delivered,
// partially_failed, failed) follow in deliveries.go.
const (
	RunRunning      = "running"
	RunNotTriggered = "not_triggered"
	RunSkipped      = "skipped"
)

// ClaimRun inserts run (normally in state RunRunning) as the claim of its
// (subscription, instant): a second claim of the same pair gives ErrConflict.
func (s *Store) ClaimRun(ctx context.Context, run Run) error {
	detail := string(run.Detail)
	if len(run.Detail) == 0 {
		detail = "{}"
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO runs(id, subscription_id, scheduled_at, state, detail, error, started, finished)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, run.ID, run.SubscriptionID, run.ScheduledAt.Unix(), run.State, detail,
		run.Error, run.Started.Unix(), unixOrNull(run.Finished))
	if isUnique(err) {
		return ErrConflict
	}
	if isForeignKey(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("claim run: %w", err)
	}
	return nil
}

// FinishRun records a claimed run's outcome and hands its deliveries over in
// one transaction: the run's state, detail, error and finish time, one
// delivery row per element of deliveries and one outbox row each.
func (s *Store) FinishRun(ctx context.Context, run Run, deliveries []Delivery) error {
	detail := string(run.Detail)
	if len(run.Detail) == 0 {
		detail = "{}"
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET state = ?, detail = ?, error = ?, finished = ? WHERE id = ?`,
			run.State, detail, run.Error, unixOrNull(run.Finished), run.ID)
		if err != nil {
			return fmt.Errorf("finish run: %w", err)
		}
		if err := affected(res); err != nil {
			return err
		}
		for _, d := range deliveries {
			if err := insertDelivery(ctx, tx, run, d); err != nil {
				return err
			}
		}
		return nil
	})
}

// LastRunTimes returns, per subscription, the latest instant it has a run for.
func (s *Store) LastRunTimes(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT subscription_id, MAX(scheduled_at) FROM runs GROUP BY subscription_id`)
	if err != nil {
		return nil, fmt.Errorf("last runs: %w", err)
	}
	defer rows.Close()
	out := make(map[string]time.Time)
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = time.Unix(at, 0).UTC()
	}
	return out, rows.Err()
}

// SubscriptionRuns lists a subscription's runs, newest first.
func (s *Store) SubscriptionRuns(ctx context.Context, subscriptionID string, limit int) ([]Run, error) {
	out, err := queryAll(ctx, s.r, scanRun, `SELECT id, subscription_id, scheduled_at, state, detail, error, started, finished
		FROM runs WHERE subscription_id = ? ORDER BY scheduled_at DESC LIMIT ?`, subscriptionID, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

func scanRun(row scanner) (Run, error) {
	var r Run
	var at, started int64
	var finished sql.NullInt64
	var detail string
	err := row.Scan(&r.ID, &r.SubscriptionID, &at, &r.State, &detail, &r.Error, &started, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("scan run: %w", err)
	}
	r.ScheduledAt, r.Started = time.Unix(at, 0).UTC(), time.Unix(started, 0).UTC()
	if finished.Valid {
		r.Finished = time.Unix(finished.Int64, 0).UTC()
	}
	r.Detail = []byte(detail)
	return r, nil
}

// PruneRuns deletes runs (and their deliveries) started before before.
func (s *Store) PruneRuns(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM runs WHERE started < ?`, before.Unix())
	if err != nil {
		return 0, fmt.Errorf("prune runs: %w", err)
	}
	return res.RowsAffected()
}

// SubscriptionState is what the engine remembers of a subscription between runs.
type SubscriptionState struct {
	LastCondition *bool // nil before the first evaluated run
	Failures      int   // failed runs in a row
	Unhealthy     bool
}

// State returns the subscription's state; a subscription never run has the zero state.
func (s *Store) State(ctx context.Context, subscriptionID string) (SubscriptionState, error) {
	var st SubscriptionState
	var last sql.NullBool
	err := s.r.QueryRowContext(ctx, `SELECT last_condition, failures, unhealthy FROM subscription_state
		WHERE subscription_id = ?`, subscriptionID).Scan(&last, &st.Failures, &st.Unhealthy)
	if errors.Is(err, sql.ErrNoRows) {
		return SubscriptionState{}, nil
	}
	if err != nil {
		return st, fmt.Errorf("subscription state: %w", err)
	}
	if last.Valid {
		st.LastCondition = &last.Bool
	}
	return st, nil
}

// SetState stores the subscription's state.
func (s *Store) SetState(ctx context.Context, subscriptionID string, st SubscriptionState, now time.Time) error {
	var last any
	if st.LastCondition != nil {
		last = boolInt(*st.LastCondition)
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO subscription_state(subscription_id, last_condition, failures, unhealthy, updated)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (subscription_id) DO UPDATE SET last_condition = excluded.last_condition,
		failures = excluded.failures, unhealthy = excluded.unhealthy, updated = excluded.updated`,
		subscriptionID, last, st.Failures, boolInt(st.Unhealthy), now.Unix())
	if isForeignKey(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("set subscription state: %w", err)
	}
	return nil
}
