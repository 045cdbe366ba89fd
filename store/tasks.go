package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Task statuses.
const (
	TaskRunning = "RUNNING"
	TaskOK      = "OK"
	TaskError   = "ERROR"
)

// Task is a polled task of a project.
type Task struct {
	ID        string
	ProjectID string
	Kind      string
	Status    string
	StartedBy string // user id; empty for tasks recorded before it was kept
	Messages  []byte // JSON array
	Result    []byte // JSON, what a finished task produced; empty when nothing
	Created   time.Time
	Finished  time.Time // zero while running
}

func insertTask(ctx context.Context, tx *sql.Tx, t Task) error {
	msgs := string(t.Messages)
	if msgs == "" {
		msgs = "[]"
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO md_tasks(id, project_id, kind, status, started_by, messages, result, created, finished)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, t.ProjectID, t.Kind, t.Status, t.StartedBy, msgs, string(t.Result),
		t.Created.Unix(), unixOrNull(t.Finished))
	if err != nil {
		return fmt.Errorf("record task: %w", err)
	}
	return nil
}

// CreateTask records a task, usually a running one.
func (s *Store) CreateTask(ctx context.Context, t Task) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return insertTask(ctx, tx, t) })
}

// FinishTask records the outcome of a running task: its status (TaskOK or TaskError), its
// messages (a JSON array) and its result. A task that is no longer running is
// ErrNotFound: it was finished already, or given up on at a restart.
func (s *Store) FinishTask(ctx context.Context, t Task) error {
	if t.Status != TaskOK && t.Status != TaskError {
		return fmt.Errorf("finish task %s: status %q is not final", t.ID, t.Status)
	}
	msgs := string(t.Messages)
	if msgs == "" {
		msgs = "[]"
	}
	res, err := s.w.ExecContext(ctx, `UPDATE md_tasks SET status = ?, messages = ?, result = ?, finished = ?
		WHERE id = ? AND status = 'RUNNING'`, t.Status, msgs, string(t.Result), t.Finished.Unix(), t.ID)
	if err != nil {
		return fmt.Errorf("finish task %s: %w", t.ID, err)
	}
	return affected(res)
}

// AbandonTasks marks every running task as failed with the messages (a JSON array) and
// returns how many there were. A process calls it as it starts: a task still running
// then was cut off by the one before, and nothing will finish it.
func (s *Store) AbandonTasks(ctx context.Context, messages []byte, at time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE md_tasks SET status = 'ERROR', messages = ?, finished = ?
		WHERE status = 'RUNNING'`, string(messages), at.Unix())
	if err != nil {
		return 0, fmt.Errorf("abandon tasks: %w", err)
	}
	return res.RowsAffected()
}

// TaskByID returns a task of the project.
func (s *Store) TaskByID(ctx context.Context, projectID, id string) (Task, error) {
	t := Task{ID: id, ProjectID: projectID}
	var msgs, result string
	var created int64
	var finished sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT kind, status, started_by, messages, result, created, finished FROM md_tasks
		WHERE id = ? AND project_id = ?`, id, projectID).Scan(&t.Kind, &t.Status, &t.StartedBy, &msgs, &result, &created, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, ErrNotFound
	}
	if err != nil {
		return Task{}, fmt.Errorf("task: %w", err)
	}
	t.Messages, t.Created = []byte(msgs), time.Unix(created, 0).UTC()
	if result != "" {
		t.Result = []byte(result)
	}
	if finished.Valid {
		t.Finished = time.Unix(finished.Int64, 0).UTC()
	}
	return t, nil
}
