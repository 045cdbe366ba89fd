package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The delivery ledger: what became of each delivery a run handed over (sent,
// failed, or an attempt that failed), written by the senders of this process
// or from the outcomes senders elsewhere report, and each run rolled up once
// its last delivery is final.

// SentMark is the accepted send of one delivery.
type SentMark struct {
	ID         string
	ProviderID string // the provider's id of the accepted message
}

// MarkSent records the accepted send of a pending delivery: one more attempt,
// the provider's id and the time. It reports false, changing nothing, when the
// delivery is already final. The run is rolled up when this was its last
// pending delivery.
func (s *Store) MarkSent(ctx context.Context, id, providerID string, now time.Time) (bool, error) {
	var changed bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		got, err := markSent(ctx, tx, []SentMark{{ID: id, ProviderID: providerID}}, now)
		if err != nil {
			return err
		}
		if changed = got[0]; !changed {
			return deliveryExists(ctx, tx, id)
		}
		return nil
	})
	return changed, err
}

// MarkSentBatch is MarkSent for many deliveries in one transaction, which
// costs little more than one: a sender records the sends that finished while
// the previous batch committed. changed[i] reports whether marks[i] was
// pending; deliveries that do not exist are reported unchanged.
func (s *Store) MarkSentBatch(ctx context.Context, marks []SentMark, now time.Time) (changed []bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		changed, err = markSent(ctx, tx, marks, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return changed, nil
}

// markSent marks the pending deliveries among marks sent, one UPDATE each, and
// rolls their runs up.
func markSent(ctx context.Context, tx *sql.Tx, marks []SentMark, now time.Time) ([]bool, error) {
	changed := make([]bool, len(marks))
	ids := make([]string, 0, len(marks))
	for i, m := range marks {
		res, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'sent', attempts = attempts + 1,
			provider_id = ?, sent_at = ?, updated = ? WHERE id = ? AND state = 'pending'`,
			m.ProviderID, now.Unix(), now.Unix(), m.ID)
		if err != nil {
			return nil, fmt.Errorf("mark sent: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("mark sent: %w", err)
		}
		if n > 0 {
			changed[i] = true
			ids = append(ids, m.ID)
		}
	}
	if err := keepMarks(ctx, tx, ids); err != nil {
		return nil, err
	}
	if err := rollUp(ctx, tx, ids, now); err != nil {
		return nil, err
	}
	return changed, nil
}

// RecordAttempt records a failed send of a pending delivery, which stays
// pending, and returns how many attempts it has had. A final delivery gives
// ErrFinal.
func (s *Store) RecordAttempt(ctx context.Context, id, errText string, now time.Time) (int, error) {
	var attempts int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE deliveries SET attempts = attempts + 1, last_error = ?, updated = ?
			WHERE id = ? AND state = 'pending' RETURNING attempts`, errText, now.Unix(), id).Scan(&attempts)
		if errors.Is(err, sql.ErrNoRows) {
			if err := deliveryExists(ctx, tx, id); err != nil {
				return err
			}
			return ErrFinal
		}
		if err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		return nil
	})
	return attempts, err
}

// MarkFailed gives up on a pending delivery with reason as its last error;
// the attempt that failed, if any, is recorded with RecordAttempt first. It
// reports false, changing nothing, when the delivery is already final. The
// run is rolled up when this was its last pending delivery.
func (s *Store) MarkFailed(ctx context.Context, id, reason string, now time.Time) (bool, error) {
	var changed bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'failed', last_error = ?, updated = ?
			WHERE id = ? AND state = 'pending'`, reason, now.Unix(), id)
		if err != nil {
			return fmt.Errorf("mark failed: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("mark failed: %w", err)
		}
		if n == 0 {
			return deliveryExists(ctx, tx, id)
		}
		changed = true
		return rollUp(ctx, tx, []string{id}, now)
	})
	return changed, err
}

// deliveryExists returns ErrNotFound when there is no delivery id.
func deliveryExists(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("find delivery: %w", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// rollUp gives each run of the given deliveries that has no pending
// delivery left its final state: delivered when every delivery was sent,
// failed when every one failed, partially_failed otherwise, with the count of
// failures as its error. Only queued runs roll up: a failed run that carries
// a notice to its owner keeps its state whatever becomes of the notice. The
// runs are tallied in one read (per chunk of ids) and each finished one is
// one UPDATE: a group commit finishes a handful of runs at most.
func rollUp(ctx context.Context, tx *sql.Tx, deliveryIDs []string, now time.Time) error {
	type tally struct {
		run                    string
		total, pending, failed int
	}
	var done []tally
	for chunk := range slices.Chunk(deliveryIDs, maxLedgerParams) {
		in, args := inList(chunk)
		rows, err := tx.QueryContext(ctx, `SELECT run_id, COUNT(*), SUM(state = 'pending'), SUM(state = 'failed')
			FROM deliveries WHERE run_id IN (SELECT run_id FROM deliveries WHERE id IN `+in+`)
			GROUP BY run_id`, args...)
		if err != nil {
			return fmt.Errorf("roll up runs: %w", err)
		}
		for rows.Next() {
			var t tally
			if err := rows.Scan(&t.run, &t.total, &t.pending, &t.failed); err != nil {
				rows.Close()
				return fmt.Errorf("roll up runs: %w", err)
			}
			if t.pending == 0 {
				done = append(done, t)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("roll up runs: %w", err)
		}
	}
	for _, t := range done {
		state, errText := RunDelivered, ""
		switch {
		case t.failed == t.total:
			state, errText = RunFailed, fmt.Sprintf("all %d deliveries failed", t.total)
		case t.failed > 0:
			state, errText = RunPartiallyFailed, fmt.Sprintf("%d of %d deliveries failed", t.failed, t.total)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET state = ?, error = CASE WHEN ? = '' THEN error ELSE ? END,
			finished = ? WHERE id = ? AND state = 'queued'`, state, errText, errText, now.Unix(), t.run); err != nil {
			return fmt.Errorf("roll up run %s: %w", t.run, err)
		}
	}
	return nil
}

// LedgerEntry is the state of one delivery as a sender reads it before a send.
type LedgerEntry struct {
	State     string
	Attempts  int
	LastError string
}

// LedgerEntries reads the states of deliveries in one query per chunk of ids;
// ids without a delivery are left out of the map.
func (s *Store) LedgerEntries(ctx context.Context, ids ...string) (map[string]LedgerEntry, error) {
	out, err := queryByID(ctx, s.r, ids, func(in string) string {
		return `SELECT id, state, attempts, last_error FROM deliveries WHERE id IN ` + in
	}, func(row scanner) (id string, e LedgerEntry, err error) {
		err = row.Scan(&id, &e.State, &e.Attempts, &e.LastError)
		return id, e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return out, nil
}

// Outcome is what a sender reports of one delivery: a failed attempt (State
// DeliveryPending), or its final state.
type Outcome struct {
	ID         string
	State      string
	Attempts   int
	LastError  string
	ProviderID string
	At         time.Time
}

// RecordOutcomes writes outcomes that senders in other processes reported, in
// one transaction, and rolls their runs up. It is idempotent and order does not
// matter: a final delivery stays as it is, and an attempt count only grows, so
// an outcome reported twice or late changes nothing. It returns how many
// deliveries became final.
func (s *Store) RecordOutcomes(ctx context.Context, outcomes []Outcome) (int, error) {
	final := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var finished, sent []string
		var latest time.Time
		for _, o := range outcomes {
			if o.At.After(latest) {
				latest = o.At
			}
			var res sql.Result
			var err error
			switch o.State {
			case DeliveryPending: // a failed attempt: no delivery becomes final
				if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET attempts = ?, last_error = ?, updated = ?
					WHERE id = ? AND state = 'pending' AND attempts < ?`, o.Attempts, o.LastError, o.At.Unix(), o.ID, o.Attempts); err != nil {
					return fmt.Errorf("record outcome: %w", err)
				}
				continue
			case DeliverySent:
				res, err = tx.ExecContext(ctx, `UPDATE deliveries SET state = 'sent', attempts = max(attempts, ?),
					provider_id = ?, sent_at = ?, updated = ? WHERE id = ? AND state = 'pending'`,
					o.Attempts, o.ProviderID, o.At.Unix(), o.At.Unix(), o.ID)
			case DeliveryFailed:
				res, err = tx.ExecContext(ctx, `UPDATE deliveries SET state = 'failed', attempts = max(attempts, ?),
					last_error = ?, updated = ? WHERE id = ? AND state = 'pending'`,
					o.Attempts, o.LastError, o.At.Unix(), o.ID)
			default:
				return fmt.Errorf("outcome of delivery %s: unknown state %q", o.ID, o.State)
			}
			if err != nil {
				return fmt.Errorf("record outcome: %w", err)
			}
			// Nothing changed when the delivery was final already, or is unknown.
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("record outcome: %w", err)
			} else if n > 0 {
				finished = append(finished, o.ID)
				if o.State == DeliverySent {
					sent = append(sent, o.ID)
				}
			}
		}
		final = len(finished)
		if err := keepMarks(ctx, tx, sent); err != nil {
			return err
		}
		return rollUp(ctx, tx, finished, latest)
	})
	return final, err
}
