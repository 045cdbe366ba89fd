package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Result states.
const (
	ResultRunning = "running"
	ResultDone    = "done"
	ResultEmpty   = "empty" // the report has no data
	ResultFailed  = "failed"
)

// Result is an executed report: what it runs (Plan), and once done where its rows are.
type Result struct {
	ID          string
	ProjectID   string
	Digest      string // identifies the compiled report; equal digests compute equal results
	DataVersion int64
	State       string
	Title       string
	Author      string // user id
	Plan        []byte // JSON, enough to compute the result again
	Rows        int
	Columns     int
	Path        string
	Error       string
	Created     time.Time
	Finished    time.Time
	Expires     time.Time
}

// CreateResult stores a new result and the object of the execution that
// asked for it (o.ResultID is r's), in one transaction.
func (s *Store) CreateResult(ctx context.Context, r Result, o ResultObject) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO report_results(id, project_id, digest, data_version, state, title, author,
			plan, created, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.ProjectID, r.Digest, r.DataVersion, r.State,
			r.Title, r.Author, string(r.Plan), r.Created.Unix(), r.Expires.Unix())
		if err != nil {
			return fmt.Errorf("create result: %w", err)
		}
		return insertResultObject(ctx, tx, o)
	})
}

// FinishResult records how a result's computation ended.
func (s *Store) FinishResult(ctx context.Context, r Result) error {
	res, err := s.w.ExecContext(ctx, `UPDATE report_results SET state = ?, rows = ?, columns = ?, path = ?, error = ?, finished = ?
		WHERE id = ?`, r.State, r.Rows, r.Columns, r.Path, r.Error, unixOrNull(r.Finished), r.ID)
	if err != nil {
		return fmt.Errorf("finish result: %w", err)
	}
	return affected(res)
}

// ShareResult stores the object of another execution of result o.ResultID
// and moves the result's expiry to expires when that is later, in one
// transaction.
func (s *Store) ShareResult(ctx context.Context, o ResultObject, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE report_results SET expires = ? WHERE id = ? AND expires < ?`,
			expires.Unix(), o.ResultID, expires.Unix())
		if err != nil {
			return fmt.Errorf("extend result: %w", err)
		}
		return insertResultObject(ctx, tx, o)
	})
}

const resultColumns = `id, project_id, digest, data_version, state, title, author, plan, rows, columns, path, error,
	created, finished, expires`

func scanResult(row scanner) (Result, error) {
	var r Result
	var plan string
	var created, expires int64
	var finished sql.NullInt64
	err := row.Scan(&r.ID, &r.ProjectID, &r.Digest, &r.DataVersion, &r.State, &r.Title, &r.Author, &plan, &r.Rows, &r.Columns,
		&r.Path, &r.Error, &created, &finished, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Result{}, ErrNotFound
	}
	if err != nil {
		return Result{}, fmt.Errorf("scan result: %w", err)
	}
	r.Plan = []byte(plan)
	r.Created, r.Expires = time.Unix(created, 0).UTC(), time.Unix(expires, 0).UTC()
	if finished.Valid {
		r.Finished = time.Unix(finished.Int64, 0).UTC()
	}
	return r, nil
}

// ResultByID returns the result with the given id.
func (s *Store) ResultByID(ctx context.Context, id string) (Result, error) {
	return scanResult(s.r.QueryRowContext(ctx, `SELECT `+resultColumns+` FROM report_results WHERE id = ?`, id))
}

// CachedResult returns the newest result of the project with the digest and data version
// that has not failed and does not expire before now.
func (s *Store) CachedResult(ctx context.Context, projectID, digest string, dataVersion int64, now time.Time) (Result, error) {
	return scanResult(s.r.QueryRowContext(ctx, `SELECT `+resultColumns+` FROM report_results
		WHERE project_id = ? AND digest = ? AND data_version = ? AND state <> 'failed' AND expires > ?
		ORDER BY created DESC LIMIT 1`, projectID, digest, dataVersion, now.Unix()))
}

// ExpiredResults lists the results that expired before now.
func (s *Store) ExpiredResults(ctx context.Context, now time.Time) ([]Result, error) {
	out, err := queryAll(ctx, s.r, scanResult, `SELECT `+resultColumns+` FROM report_results WHERE expires <= ?`, now.Unix())
	if err != nil {
		return nil, fmt.Errorf("list results: %w", err)
	}
	return out, nil
}

// DeleteResult removes a result's record.
func (s *Store) DeleteResult(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM report_results WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete result: %w", err)
	}
	return nil
}

// ResultObject is one execution's answer: its caller and time, over a result that equal
// executions share.
type ResultObject struct {
	ID        string
	ProjectID string
	ResultID  string
	Author    string // user id
	Created   time.Time
}

func insertResultObject(ctx context.Context, tx *sql.Tx, o ResultObject) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO result_objects(id, project_id, result_id, author, created) VALUES (?, ?, ?, ?, ?)`,
		o.ID, o.ProjectID, o.ResultID, o.Author, o.Created.Unix())
	if err != nil {
		return fmt.Errorf("create result object: %w", err)
	}
	return nil
}

// ResultObjectByID returns the result object with the given id.
func (s *Store) ResultObjectByID(ctx context.Context, id string) (ResultObject, error) {
	var o ResultObject
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT id, project_id, result_id, author, created FROM result_objects WHERE id = ?`, id).
		Scan(&o.ID, &o.ProjectID, &o.ResultID, &o.Author, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ResultObject{}, ErrNotFound
	case err != nil:
		return ResultObject{}, fmt.Errorf("read result object: %w", err)
	}
	o.Created = time.Unix(created, 0).UTC()
	return o, nil
}
