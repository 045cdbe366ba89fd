package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write would break a uniqueness rule.
var ErrConflict = errors.New("conflict")

// Store is the SQLite database of one Herald data folder.
type Store struct {
	w  *sql.DB // the single writer connection
	r  *sql.DB // read-only pool
	ck *sql.DB // the checkpointer's connection

	fence *fence // asked before every commit of the writer

	stopCheckpoints chan struct{}
	checkpointer    sync.WaitGroup
	closed          sync.Once

	// Statements of the hottest reads, prepared once.
	userProjects *sql.Stmt

	// projects counts the committed writes of projects and memberships (see
	// ProjectsVersion).
	projects atomic.Uint64
}

// Open opens (creating if needed) the database file at path and applies every
// pending migration in one transaction.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// SQLite gives the -wal and -shm files the database file's mode: create it private.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	params := url.Values{}
	params.Set("_journal_mode", "WAL")
	params.Set("_foreign_keys", "on")
	params.Set("_busy_timeout", "5000")
	params.Set("_synchronous", "NORMAL")
	params.Set("_txlock", "immediate")
	params.Set("_stmt_cache_size", "64")
	fenced := &fence{}
	w := sql.OpenDB(newConnector("file:"+abs+"?"+params.Encode(), fenced,
		"PRAGMA wal_autocheckpoint = "+strconv.Itoa(writerCheckpointPages),
		"PRAGMA cache_size = "+strconv.Itoa(-writerCacheKiB)))
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, fence: fenced}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	params.Set("_query_only", "1")
	params.Del("_txlock")
	r, err := sql.Open("sqlite3", "file:"+abs+"?"+params.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store readers: %w", err)
	}
	r.SetMaxOpenConns(max(4, 2*runtime.GOMAXPROCS(0)))
	r.SetMaxIdleConns(max(4, 2*runtime.GOMAXPROCS(0)))
	s.r = r
	if s.userProjects, err = r.PrepareContext(ctx, `SELECT p.`+strings.ReplaceAll(projectColumns, ", ", ", p.")+
		userProjectsWhere+` ORDER BY p.created, p.rowid LIMIT ? OFFSET ?`); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("prepare: %w", err)
	}
	params.Del("_query_only")
	if s.ck, err = sql.Open("sqlite3", "file:"+abs+"?"+params.Encode()); err != nil {
		s.userProjects.Close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open store checkpointer: %w", err)
	}
	s.ck.SetMaxOpenConns(1)
	s.stopCheckpoints = make(chan struct{})
	s.checkpointer.Go(s.checkpoints)
	return s, nil
}

// Close stops the checkpointer and closes the connections; later calls do
// nothing.
func (s *Store) Close() error {
	var err error
	s.closed.Do(func() {
		close(s.stopCheckpoints)
		s.checkpointer.Wait()
		err = errors.Join(s.userProjects.Close(), s.ck.Close(), s.r.Close(), s.w.Close())
	})
	return err
}

// migrate applies the pending migrations in one transaction, with foreign keys
// off so that a migration may make a table again, and checks them before it commits.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`) }()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := applyMigrations(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	var violations int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&violations); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("migrate: check foreign keys: %w", err)
	}
	if violations > 0 {
		_ = tx.Rollback()
		return fmt.Errorf("migrate: %d rows would break foreign keys", violations)
	}
	return tx.Commit()
}

func applyMigrations(ctx context.Context, tx *sql.Tx) error {
	{
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		names, err := fs.Glob(migrations, "migrations/*.sql")
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, name := range names {
			base := filepath.Base(name)
			version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
			if err != nil {
				return fmt.Errorf("migration %s: bad version prefix", base)
			}
			if version <= current {
				continue
			}
			body, err := migrations.ReadFile(name)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("apply migration %s: %w", base, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied) VALUES (?, ?, ?)`,
				version, base, time.Now().Unix()); err != nil {
				return fmt.Errorf("record migration %s: %w", base, err)
			}
		}
		return nil
	}
}

// tx runs fn in a write transaction on the writer connection.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", s.fence.explain(err))
	}
	return nil
}

// isUnique reports whether err is a violation of a UNIQUE or PRIMARY KEY constraint.
func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint &&
		(se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)
}

// placeholders returns n comma-separated placeholders: "?, ?, ?".
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// inList returns an IN list of placeholders for ids, "(?, ?, ?)", and the ids
// as the statement's arguments.
func inList(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(" + placeholders(len(ids)) + ")", args
}

// scanner is a row that can be scanned: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// queryAll runs query and scans every row it returns.
func queryAll[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := eachRow(ctx, db, func(row scanner) error {
		v, err := scan(row)
		if err == nil {
			out = append(out, v)
		}
		return err
	}, query, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queryByID reads rows by id, one query per chunk of ids: query gives the
// statement for a chunk's IN list, "(?, ?, ?)", and scan reads a row's id and
// value. ids without a row are left out of the map.
func queryByID[T any](ctx context.Context, db *sql.DB, ids []string, query func(in string) string,
	scan func(scanner) (string, T, error)) (map[string]T, error) {
	out := make(map[string]T, len(ids))
	for chunk := range slices.Chunk(ids, maxLedgerParams) {
		in, args := inList(chunk)
		if err := eachRow(ctx, db, func(row scanner) error {
			id, v, err := scan(row)
			if err == nil {
				out[id] = v
			}
			return err
		}, query(in), args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// eachRow runs query and calls fn with each row it returns, stopping at the
// first error.
func eachRow(ctx context.Context, db querier, fn func(scanner) error, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// querier is a database or a transaction, to run a query in.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// isForeignKey reports whether err is a violated FOREIGN KEY constraint.
func isForeignKey(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintForeignKey
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
