package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// unratedRunsQuery reads the final runs not yet rated through the index
// runs_unrated, whose condition its own matches.
const unratedRunsQuery = `SELECT id, subscription_id, scheduled_at, state, '{}', error, started, finished
	FROM runs WHERE rated = 0 AND state NOT IN ('running', 'queued') ORDER BY finished, rowid LIMIT ?`

// UnratedRuns lists, in the order they became final, up to limit runs in a
// final state whose outcome has not yet counted toward their subscription's
// health. Their Detail is left out.
func (s *Store) UnratedRuns(ctx context.Context, limit int) ([]Run, error) {
	out, err := queryAll(ctx, s.r, scanRun, unratedRunsQuery, limit)
	if err != nil {
		return nil, fmt.Errorf("unrated runs: %w", err)
	}
	return out, nil
}

// States returns the states of the given subscriptions in one read; a
// subscription never run is left out.
func (s *Store) States(ctx context.Context, ids []string) (map[string]SubscriptionState, error) {
	out, err := queryByID(ctx, s.r, ids, func(in string) string {
		return `SELECT subscription_id, last_condition, last_values, failures, unhealthy FROM subscription_state
			WHERE subscription_id IN ` + in
	}, func(row scanner) (id string, st SubscriptionState, err error) {
		var last sql.NullBool
		var values sql.NullString
		if err = row.Scan(&id, &last, &values, &st.Failures, &st.Unhealthy); err != nil {
			return id, st, err
		}
		if last.Valid {
			st.LastCondition = &last.Bool
		}
		if values.Valid {
			_ = json.Unmarshal([]byte(values.String), &st.LastValues) // unreadable: as before the first
		}
		return id, st, nil
	})
	if err != nil {
		return nil, fmt.Errorf("subscription states: %w", err)
	}
	return out, nil
}

// Rating is a run's outcome counted toward its subscription's health: the
// subscription's failures in a row and health after it, whether they
// changed, and the notice to hand over with it when it made the subscription
// unhealthy.
type Rating struct {
	Run       Run
	Failures  int
	Unhealthy bool
	Changed   bool
	Notice    []Delivery
	// Pause, when set, is why the subscription pauses itself: it is
	// disabled, and the run records the event.
	Pause string
}

// RateRuns records ratings in one transaction: each subscription's health
// that changed, the notices with their outbox rows, and each run counted. A
// run deleted meanwhile is passed over.
func (s *Store) RateRuns(ctx context.Context, ratings []Rating, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var plain []any // runs that change nothing but their mark
		for _, r := range ratings {
			if !r.Changed && len(r.Notice) == 0 && r.Pause == "" {
				plain = append(plain, r.Run.ID)
				continue
			}
			if err := rateRun(ctx, tx, r, now); err != nil {
				return err
			}
		}
		for chunk := range slices.Chunk(plain, maxLedgerParams) {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET rated = 1 WHERE id IN (`+placeholders(len(chunk))+`)`,
				chunk...); err != nil {
				return fmt.Errorf("rate runs: %w", err)
			}
		}
		return nil
	})
}

func rateRun(ctx context.Context, tx *sql.Tx, r Rating, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE runs SET rated = 1 WHERE id = ? AND rated = 0`, r.Run.ID)
	if err != nil {
		return fmt.Errorf("rate run: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO subscription_state(subscription_id, failures, unhealthy, updated)
		VALUES (?, ?, ?, ?) ON CONFLICT (subscription_id) DO UPDATE SET failures = excluded.failures,
		unhealthy = excluded.unhealthy, updated = excluded.updated`,
		r.Run.SubscriptionID, r.Failures, boolInt(r.Unhealthy), now.Unix()); err != nil {
		return fmt.Errorf("rate run: %w", err)
	}
	if r.Pause != "" {
		if err := pauseItself(ctx, tx, r, now); err != nil {
			return err
		}
	}
	return insertDeliveries(ctx, tx, handovers(r.Run, r.Notice))
}

// pauseItself disables the subscription of r's run, and records the event
// on the run.
func pauseItself(ctx context.Context, tx *sql.Tx, r Rating, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET enabled = 0, updated = ? WHERE id = ?`,
		now.Unix(), r.Run.SubscriptionID); err != nil {
		return fmt.Errorf("pause subscription: %w", err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE runs SET detail = json_insert(detail, '$.events[#]',
		json_object('event', 'paused', 'by', 'herald', 'reason', ?, 'at', ?)) WHERE id = ?`,
		r.Pause, now.UTC().Format(time.RFC3339), r.Run.ID)
	if err != nil {
		return fmt.Errorf("pause subscription: %w", err)
	}
	return nil
}
