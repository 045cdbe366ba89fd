package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// CategoryUserFilter is the category of a mandatory user filter object.
const CategoryUserFilter = "userFilter"

// ErrAssigned is the answer to deleting a user filter that users still have.
var ErrAssigned = errors.New("the user filter is assigned to users")

// ErrNotUserFilter is the answer to assigning an object of the project that
// is not a user filter, or no object of the project.
var ErrNotUserFilter = errors.New("not a user filter of the project")

// UserFilters returns the user filters assigned to user in the project,
// with their content, in the order of their ids.
func (s *Store) UserFilters(ctx context.Context, projectID, userID string) ([]Object, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixed("o", objectMeta)+`, o.content FROM user_filters f
		JOIN md_objects o ON o.id = f.filter_id WHERE f.project_id = ? AND f.user_id = ? ORDER BY o.id`, projectID, userID)
	if err != nil {
		return nil, fmt.Errorf("user filters: %w", err)
	}
	defer rows.Close()
	var out []Object
	for rows.Next() {
		o, err := scanObject(rows, true)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// SetUserFilters replaces the user filters of user in the project with the
// objects filterIDs, which must be user filters of the project
// (ErrNotUserFilter names none); an empty list removes them all. A user
// that does not exist is ErrNotFound.
func (s *Store) SetUserFilters(ctx context.Context, projectID, userID string, filterIDs []int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)`, userID).Scan(&exists); err != nil {
			return fmt.Errorf("set user filters: %w", err)
		}
		if !exists {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_filters WHERE project_id = ? AND user_id = ?`, projectID, userID); err != nil {
			return fmt.Errorf("set user filters: %w", err)
		}
		ids := slices.Clone(filterIDs)
		slices.Sort(ids)
		for _, id := range slices.Compact(ids) {
			res, err := tx.ExecContext(ctx, `INSERT INTO user_filters(project_id, user_id, filter_id)
				SELECT ?, ?, id FROM md_objects WHERE id = ? AND project_id = ? AND category = ?
				ON CONFLICT DO NOTHING`, projectID, userID, id, projectID, CategoryUserFilter)
			if err != nil {
				return fmt.Errorf("set user filters: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return fmt.Errorf("object %d: %w", id, ErrNotUserFilter)
			}
		}
		return nil
	})
}

// Assignment is the user filters one user has in a project.
type Assignment struct {
	UserID  string
	Filters []int64 // object ids, ascending
}

// AssignmentQuery selects assignments: of the users (any when empty), that
// hold one of the filters (any when empty), Count of them from Offset, by
// user id.
type AssignmentQuery struct {
	Users   []string
	Filters []int64
	Offset  int
	Count   int
}

// Assignments lists the users of the project with user filters that q
// selects, each with all their filters, and how many users q selects in
// all.
func (s *Store) Assignments(ctx context.Context, projectID string, q AssignmentQuery) ([]Assignment, int, error) {
	where, args := "f.project_id = ?", []any{projectID}
	if len(q.Users) > 0 {
		in, a := inList(q.Users)
		where += " AND f.user_id IN " + in
		args = append(args, a...)
	}
	if len(q.Filters) > 0 {
		ids := make([]string, len(q.Filters))
		for i, id := range q.Filters {
			ids[i] = fmt.Sprint(id)
		}
		in, a := inList(ids)
		where += " AND EXISTS (SELECT 1 FROM user_filters g WHERE g.project_id = f.project_id AND g.user_id = f.user_id AND g.filter_id IN " + in + ")"
		args = append(args, a...)
	}
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(DISTINCT f.user_id) FROM user_filters f WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("user filter assignments: %w", err)
	}
	users, err := queryAll(ctx, s.r, func(row scanner) (string, error) {
		var u string
		return u, row.Scan(&u)
	}, `SELECT DISTINCT f.user_id FROM user_filters f WHERE `+where+` ORDER BY f.user_id LIMIT ? OFFSET ?`,
		append(args, q.Count, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("user filter assignments: %w", err)
	}
	out := make([]Assignment, 0, len(users))
	if len(users) == 0 {
		return out, total, nil
	}
	// The page's filters in one read, not one per user.
	in, a := inList(users)
	type held struct {
		user string
		id   int64
	}
	all, err := queryAll(ctx, s.r, func(row scanner) (held, error) {
		var h held
		return h, row.Scan(&h.user, &h.id)
	}, `SELECT user_id, filter_id FROM user_filters WHERE project_id = ? AND user_id IN `+in+` ORDER BY filter_id`,
		append([]any{projectID}, a...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("user filter assignments: %w", err)
	}
	byUser := make(map[string][]int64, len(users))
	for _, h := range all {
		byUser[h.user] = append(byUser[h.user], h.id)
	}
	for _, u := range users {
		out = append(out, Assignment{UserID: u, Filters: byUser[u]})
	}
	return out, total, nil
}

// ProjectUserFilters returns the user filters of every user who has some in
// the project, with their content, by user id, each user's in the order of
// their ids: one read for a fire to many members.
func (s *Store) ProjectUserFilters(ctx context.Context, projectID string) (map[string][]Object, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT f.user_id, `+prefixed("o", objectMeta)+`, o.content FROM user_filters f
		JOIN md_objects o ON o.id = f.filter_id WHERE f.project_id = ? ORDER BY f.user_id, o.id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("user filters: %w", err)
	}
	defer rows.Close()
	out := map[string][]Object{}
	for rows.Next() {
		var user string
		o, err := scanObject(prefixedScan{rows, &user}, true)
		if err != nil {
			return nil, err
		}
		out[user] = append(out[user], o)
	}
	return out, rows.Err()
}

// prefixedScan scans a column before the ones its scanner reads.
type prefixedScan struct {
	row   scanner
	first any
}

func (p prefixedScan) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }
