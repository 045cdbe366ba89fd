package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	claimed, err := s.ClaimRuns(ctx, []Run{run})
	switch {
	case err != nil:
		return err
	case !claimed[0]:
		return ErrConflict
	}
	return nil
}

// ClaimRuns inserts each run as the claim of its (subscription, instant) in
// one transaction and reports which were claimed: false where the pair was
// claimed already or the subscription no longer exists.
func (s *Store) ClaimRuns(ctx context.Context, runs []Run) ([]bool, error) {
	claimed := make([]bool, len(runs))
	index := make(map[string]int, len(runs))
	for i, run := range runs {
		index[run.ID] = i
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(runs, claimRows) {
			args := make([]any, 0, 9*len(chunk))
			for _, run := range chunk {
				args = append(args, run.ID, run.SubscriptionID, run.ScheduledAt.Unix(), run.State, detailOf(run), run.Error,
					run.Started.Unix(), unixOrNull(run.Finished), run.Incarnation)
			}
			err := eachRow(ctx, tx, func(row scanner) error {
				var id string
				if err := row.Scan(&id); err != nil {
					return err
				}
				i, ok := index[id]
				if !ok {
					return fmt.Errorf("claimed run %s is not of the batch", id)
				}
				claimed[i] = true
				return nil
			}, `INSERT INTO runs(id, subscription_id, scheduled_at, state, detail, error, started, finished, incarnation)
				SELECT * FROM (VALUES `+valueRows(len(chunk), 9)+`) AS v
				WHERE EXISTS (SELECT 1 FROM subscriptions WHERE id = v.column2)
				ON CONFLICT (subscription_id, scheduled_at) DO NOTHING RETURNING id`, args...)
			if err != nil {
				return fmt.Errorf("claim runs: %w", err)
			}
		}
		return nil
	})
	return claimed, err
}

// claimRows is how many runs one statement of ClaimRuns inserts, at nine
// parameters a run.
const claimRows = maxLedgerParams / 9

func detailOf(run Run) string {
	if len(run.Detail) == 0 {
		return "{}"
	}
	return string(run.Detail)
}

// Finish is the outcome of a claimed run: the run's final fields, the
// deliveries it hands over, and the condition it saw.
type Finish struct {
	Run        Run
	Deliveries []Delivery
	State      *SubscriptionState // its LastCondition is recorded; nil: leave the state as it is
}

// FinishRuns records the outcomes of claimed runs in one transaction: each
// run's state, detail, error and finish time, one delivery row per delivery
// with its outbox row, and the subscription's state.
func (s *Store) FinishRuns(ctx context.Context, fins []Finish, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var hs []handover
		for _, f := range fins {
			run := f.Run
			res, err := tx.ExecContext(ctx, `UPDATE runs SET state = ?, detail = ?, error = ?, finished = ? WHERE id = ?`,
				run.State, detailOf(run), run.Error, unixOrNull(run.Finished), run.ID)
			if err != nil {
				return fmt.Errorf("finish run: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				continue // the subscription, and with it the run, was deleted meanwhile
			}
			hs = append(hs, handovers(run, f.Deliveries)...)
			if f.State != nil {
				if err := setLastCondition(ctx, tx, run.SubscriptionID, *f.State, now); err != nil {
					return err
				}
			}
		}
		return insertDeliveries(ctx, tx, hs)
	})
}

// TakeOverRun makes a running run this process's own by moving its start
// to now, only if nobody did so since run was read.
func (s *Store) TakeOverRun(ctx context.Context, run Run, incarnation string, now time.Time) (bool, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE runs SET started = ?, incarnation = ? WHERE id = ? AND state = 'running' AND started = ?
		AND incarnation = ?`, now.Unix(), incarnation, run.ID, run.Started.Unix(), run.Incarnation)
	if err != nil {
		return false, fmt.Errorf("take over run: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RunningRuns lists the runs still in state running: claimed by a process
// that stopped before finishing them.
func (s *Store) RunningRuns(ctx context.Context) ([]Run, error) {
	out, err := queryAll(ctx, s.r, func(row scanner) (Run, error) {
		var inc string
		r, err := scanRun(incarnated{row, &inc})
		r.Incarnation = inc
		return r, err
	}, `SELECT id, subscription_id, scheduled_at, state, detail, error, started, finished, incarnation
		FROM runs WHERE state = 'running' ORDER BY scheduled_at`)
	if err != nil {
		return nil, fmt.Errorf("running runs: %w", err)
	}
	return out, nil
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
func (s *Store) SubscriptionRuns(ctx context.Context, subscriptionID string, limit, offset int) ([]Run, error) {
	out, err := queryAll(ctx, s.r, scanRun, `SELECT id, subscription_id, scheduled_at, state, detail, error, started, finished
		FROM runs WHERE subscription_id = ? ORDER BY scheduled_at DESC LIMIT ? OFFSET ?`, subscriptionID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// incarnated scans a run's row with its incarnation last, into inc.
type incarnated struct {
	row scanner
	inc *string
}

func (r incarnated) Scan(dest ...any) error { return r.row.Scan(append(dest, r.inc)...) }

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

// PruneRuns deletes runs (and their deliveries) started before before, except
// those with a delivery still pending: a message not yet sent or given up keeps
// its run.
func (s *Store) PruneRuns(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM runs WHERE started < ?
		AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.run_id = runs.id AND d.state = 'pending')`, before.Unix())
	if err != nil {
		return 0, fmt.Errorf("prune runs: %w", err)
	}
	return res.RowsAffected()
}

// PendingInstants returns the instants before before that have a delivery
// still pending, as Unix seconds.
func (s *Store) PendingInstants(ctx context.Context, before time.Time) (map[int64]bool, error) {
	out := map[int64]bool{}
	err := eachRow(ctx, s.r, func(r scanner) error {
		var at int64
		if err := r.Scan(&at); err != nil {
			return err
		}
		out[at] = true
		return nil
	}, `SELECT DISTINCT scheduled_at FROM deliveries WHERE state = 'pending' AND scheduled_at < ?`, before.Unix())
	if err != nil {
		return nil, fmt.Errorf("pending instants: %w", err)
	}
	return out, nil
}

// PendingFiles returns the paths of the files attached to the deliveries of
// instants before before that are still pending.
func (s *Store) PendingFiles(ctx context.Context, before time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	err := eachRow(ctx, s.r, func(r scanner) error {
		var payload string
		if err := r.Scan(&payload); err != nil {
			return err
		}
		var p struct {
			HTMLFile    string       `json:"htmlFile"`
			Attachments []Attachment `json:"attachments"`
		}
		if err := json.Unmarshal([]byte(payload), &p); err != nil {
			return err
		}
		for _, a := range p.Attachments {
			out[a.Path] = true
		}
		if p.HTMLFile != "" {
			out[p.HTMLFile] = true
		}
		return nil
	}, `SELECT p.payload FROM deliveries d JOIN delivery_payloads p ON p.delivery_id = d.id
		WHERE d.state = 'pending' AND d.scheduled_at < ?`, before.Unix())
	if err != nil {
		return nil, fmt.Errorf("pending files: %w", err)
	}
	return out, nil
}

// SubscriptionState is what the engine remembers of a subscription between runs.
type SubscriptionState struct {
	LastCondition *bool // nil before the first evaluated run
	// LastValues are the values, by metric URI, of the metrics the
	// subscription reads with f:previous, as its last evaluated run saw
	// them (nil: no value); nil before the first.
	LastValues map[string]*float64
	Failures   int // failed runs in a row
	Unhealthy  bool
}

// State returns the subscription's state; a subscription never run has the zero state.
func (s *Store) State(ctx context.Context, subscriptionID string) (SubscriptionState, error) {
	states, err := s.States(ctx, []string{subscriptionID})
	return states[subscriptionID], err
}

// setLastCondition records the condition a run saw; the health fields are
// the roll-up's (RateRuns).
func setLastCondition(ctx context.Context, tx *sql.Tx, subscriptionID string, st SubscriptionState, now time.Time) error {
	var last, values any
	if st.LastCondition != nil {
		last = boolInt(*st.LastCondition)
	}
	if st.LastValues != nil {
		b, err := json.Marshal(st.LastValues)
		if err != nil {
			return fmt.Errorf("set subscription state: %w", err)
		}
		values = string(b)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO subscription_state(subscription_id, last_condition, last_values, updated)
		VALUES (?, ?, ?, ?) ON CONFLICT (subscription_id) DO UPDATE SET last_condition = excluded.last_condition,
		last_values = excluded.last_values, updated = excluded.updated`, subscriptionID, last, values, now.Unix())
	if isForeignKey(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("set subscription state: %w", err)
	}
	return nil
}
