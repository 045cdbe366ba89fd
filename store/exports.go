package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Export states.
const (
	ExportRunning = "running"
	ExportDone    = "done"
	ExportEmpty   = "empty" // the report has no data
	ExportFailed  = "failed"
)

// Export is a report result being, or having been, exported as a file.
type Export struct {
	ID        string
	ProjectID string
	ResultID  string
	Format    string
	State     string
	Title     string // the report's title, which names the file
	Path      string // the file, once done
	Error     string
	Created   time.Time
	Finished  time.Time
	Expires   time.Time
}

// CreateExport stores a new export.
func (s *Store) CreateExport(ctx context.Context, e Export) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO exports(id, project_id, result_id, format, state, created, expires)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, e.ID, e.ProjectID, e.ResultID, e.Format, e.State, e.Created.Unix(), e.Expires.Unix())
	if err != nil {
		return fmt.Errorf("create export: %w", err)
	}
	return nil
}

// FinishExport records an export's outcome.
func (s *Store) FinishExport(ctx context.Context, e Export) error {
	res, err := s.w.ExecContext(ctx, `UPDATE exports SET state = ?, title = ?, path = ?, error = ?, finished = ? WHERE id = ?`,
		e.State, e.Title, e.Path, e.Error, unixOrNull(e.Finished), e.ID)
	if err != nil {
		return fmt.Errorf("finish export: %w", err)
	}
	return affected(res)
}

const exportColumns = `id, project_id, result_id, format, state, title, path, error, created, finished, expires`

func scanExport(row scanner) (Export, error) {
	var e Export
	var created, expires int64
	var finished sql.NullInt64
	err := row.Scan(&e.ID, &e.ProjectID, &e.ResultID, &e.Format, &e.State, &e.Title, &e.Path, &e.Error,
		&created, &finished, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Export{}, ErrNotFound
	}
	if err != nil {
		return Export{}, fmt.Errorf("scan export: %w", err)
	}
	e.Created, e.Expires = time.Unix(created, 0).UTC(), time.Unix(expires, 0).UTC()
	if finished.Valid {
		e.Finished = time.Unix(finished.Int64, 0).UTC()
	}
	return e, nil
}

// ExportByID returns the export with the given id.
func (s *Store) ExportByID(ctx context.Context, id string) (Export, error) {
	return scanExport(s.r.QueryRowContext(ctx, `SELECT `+exportColumns+` FROM exports WHERE id = ?`, id))
}

// RunningExports lists the exports that were not finished, oldest first.
func (s *Store) RunningExports(ctx context.Context) ([]Export, error) {
	return s.queryExports(ctx, `state = 'running' ORDER BY created`)
}

// ExpiredExports lists the exports that expired before now.
func (s *Store) ExpiredExports(ctx context.Context, now time.Time) ([]Export, error) {
	return s.queryExports(ctx, `expires <= ?`, now.Unix())
}

func (s *Store) queryExports(ctx context.Context, where string, args ...any) ([]Export, error) {
	out, err := queryAll(ctx, s.r, scanExport, `SELECT `+exportColumns+` FROM exports WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list exports: %w", err)
	}
	return out, nil
}

// DeleteExport removes an export's record.
func (s *Store) DeleteExport(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM exports WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete export: %w", err)
	}
	return nil
}
