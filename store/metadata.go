package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Object is a metadata object of a project: a data model object or a user's metric,
// report definition or report.
type Object struct {
	ID          int64
	ProjectID   string
	Category    string
	Identifier  string
	InModel     bool // owned by the project's data model, changed only through it
	Title       string
	Summary     string
	Tags        string
	Deprecated  bool
	Content     []byte // JSON; nil in listings
	Author      string // user id
	Contributor string // user id
	Created     time.Time
	Updated     time.Time
}

const objectMeta = `id, project_id, category, identifier, in_model, title, summary, tags, deprecated, author, contributor, created, updated`

func scanObject(row interface{ Scan(...any) error }, withContent bool) (Object, error) {
	var o Object
	var created, updated int64
	dest := []any{&o.ID, &o.ProjectID, &o.Category, &o.Identifier, &o.InModel, &o.Title, &o.Summary, &o.Tags,
		&o.Deprecated, &o.Author, &o.Contributor, &created, &updated}
	var content string
	if withContent {
		dest = append(dest, &content)
	}
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, fmt.Errorf("scan object: %w", err)
	}
	if withContent {
		o.Content = []byte(content)
	}
	o.Created, o.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	return o, nil
}

func scanObjects(rows *sql.Rows, err error) ([]Object, error) {
	if err != nil {
		return nil, fmt.Errorf("list objects: %w", err)
	}
	defer rows.Close()
	var out []Object
	for rows.Next() {
		o, err := scanObject(rows, false)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// CreateObject stores a new object that uses the objects uses, and returns its id. An
// identifier taken in the project is ErrConflict.
func (s *Store) CreateObject(ctx context.Context, o Object, uses []int64) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO md_objects(project_id, category, identifier, in_model, title, summary, tags,
			deprecated, content, author, contributor, created, updated) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.ProjectID, o.Category, o.Identifier, o.Title, o.Summary, o.Tags, boolInt(o.Deprecated), string(o.Content),
			o.Author, o.Contributor, o.Created.Unix(), o.Updated.Unix())
		if isUnique(err) {
			return ErrConflict
		}
		if err != nil {
			return fmt.Errorf("create object: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		return putUses(ctx, tx, id, uses)
	})
	return id, err
}

// UpdateObject replaces the meta, content and uses of a user's object (author and
// created stay). ErrNotFound when the project has no such object outside the model,
// ErrConflict when the new identifier is taken.
func (s *Store) UpdateObject(ctx context.Context, o Object, uses []int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE md_objects SET identifier = ?, title = ?, summary = ?, tags = ?, deprecated = ?,
			content = ?, contributor = ?, updated = ? WHERE id = ? AND project_id = ? AND category = ? AND in_model = 0`,
			o.Identifier, o.Title, o.Summary, o.Tags, boolInt(o.Deprecated), string(o.Content), o.Contributor, o.Updated.Unix(),
			o.ID, o.ProjectID, o.Category)
		if isUnique(err) {
			return ErrConflict
		}
		if err != nil {
			return fmt.Errorf("update object: %w", err)
		}
		if err := affected(res); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM md_uses WHERE from_id = ?`, o.ID); err != nil {
			return fmt.Errorf("update object uses: %w", err)
		}
		return putUses(ctx, tx, o.ID, uses)
	})
}

func putUses(ctx context.Context, tx *sql.Tx, from int64, uses []int64) error {
	for _, to := range uses {
		if _, err := tx.ExecContext(ctx, `INSERT INTO md_uses(from_id, to_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, from, to); err != nil {
			if isForeignKey(err) {
				return ErrNotFound
			}
			return fmt.Errorf("record object uses: %w", err)
		}
	}
	return nil
}

// DeleteObject deletes a user's object. An object that others use is an *InUseError
// listing their ids, a user filter that users have is ErrAssigned; one that does not
// exist (or belongs to the model) is ErrNotFound.
func (s *Store) DeleteObject(ctx context.Context, projectID string, id int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT from_id FROM md_uses WHERE to_id = ? ORDER BY from_id`, id)
		if err != nil {
			return fmt.Errorf("delete object: %w", err)
		}
		var users []string
		for rows.Next() {
			var from int64
			if err := rows.Scan(&from); err != nil {
				rows.Close()
				return err
			}
			users = append(users, strconv.FormatInt(from, 10))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var assigned bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM user_filters WHERE filter_id = ? AND project_id = ?)`,
			id, projectID).Scan(&assigned); err != nil {
			return fmt.Errorf("delete object: %w", err)
		}
		if assigned {
			return ErrAssigned
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM md_objects WHERE id = ? AND project_id = ? AND in_model = 0 AND NOT EXISTS
			(SELECT 1 FROM md_uses WHERE to_id = ?)`, id, projectID, id)
		if err != nil {
			return fmt.Errorf("delete object: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		if len(users) > 0 {
			var exists bool
			err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM md_objects WHERE id = ? AND project_id = ? AND in_model = 0)`,
				id, projectID).Scan(&exists)
			if err != nil {
				return err
			}
			if exists {
				return &InUseError{By: users}
			}
		}
		return ErrNotFound
	})
}

// ObjectByID returns the project's object with its content.
func (s *Store) ObjectByID(ctx context.Context, projectID string, id int64) (Object, error) {
	return scanObject(s.r.QueryRowContext(ctx, `SELECT `+objectMeta+`, content FROM md_objects WHERE id = ? AND project_id = ?`,
		id, projectID), true)
}

// ObjectOwner returns the project of the object with the id.
func (s *Store) ObjectOwner(ctx context.Context, id int64) (string, error) {
	var pid string
	err := s.r.QueryRowContext(ctx, `SELECT project_id FROM md_objects WHERE id = ?`, id).Scan(&pid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return pid, err
}

// ObjectsByCategory lists the project's objects of a category, oldest first, without content.
func (s *Store) ObjectsByCategory(ctx context.Context, projectID, category string) ([]Object, error) {
	return scanObjects(s.r.QueryContext(ctx, `SELECT `+objectMeta+` FROM md_objects WHERE project_id = ? AND category = ?
		ORDER BY id`, projectID, category))
}

// ObjectsByIDs returns those of the ids that are objects of the project, without content.
func (s *Store) ObjectsByIDs(ctx context.Context, projectID string, ids []int64) ([]Object, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{projectID}
	for _, id := range ids {
		args = append(args, id)
	}
	return scanObjects(s.r.QueryContext(ctx, `SELECT `+objectMeta+` FROM md_objects WHERE project_id = ? AND id IN (`+
		placeholders(len(ids))+`) ORDER BY id`, args...))
}

// ObjectsByIdentifiers returns those of the identifiers that name objects of the project,
// without content.
func (s *Store) ObjectsByIdentifiers(ctx context.Context, projectID string, identifiers []string) ([]Object, error) {
	if len(identifiers) == 0 {
		return nil, nil
	}
	args := []any{projectID}
	for _, id := range identifiers {
		args = append(args, id)
	}
	return scanObjects(s.r.QueryContext(ctx, `SELECT `+objectMeta+` FROM md_objects WHERE project_id = ? AND identifier IN (`+
		placeholders(len(identifiers))+`) ORDER BY id`, args...))
}

// UserObjects lists the project's objects outside the model, without content.
func (s *Store) UserObjects(ctx context.Context, projectID string) ([]Object, error) {
	return scanObjects(s.r.QueryContext(ctx, `SELECT `+objectMeta+` FROM md_objects WHERE project_id = ? AND in_model = 0
		ORDER BY id`, projectID))
}

// Uses lists the objects the object uses: directly, or also through others when
// transitive is set. UsedBy lists the objects that use it.
func (s *Store) Uses(ctx context.Context, projectID string, id int64, transitive bool) ([]Object, error) {
	return s.walkUses(ctx, projectID, id, transitive, "to_id", "from_id")
}

// UsedBy lists the objects that use the object, directly or, when transitive is set, also
// through others.
func (s *Store) UsedBy(ctx context.Context, projectID string, id int64, transitive bool) ([]Object, error) {
	return s.walkUses(ctx, projectID, id, transitive, "from_id", "to_id")
}

func (s *Store) walkUses(ctx context.Context, projectID string, id int64, transitive bool, next, this string) ([]Object, error) {
	q := `SELECT ` + objectMeta + ` FROM md_objects WHERE project_id = ? AND id IN (SELECT ` + next + ` FROM md_uses WHERE ` + this + ` = ?) ORDER BY id`
	if transitive {
		q = `WITH RECURSIVE r(id) AS (SELECT ` + next + ` FROM md_uses WHERE ` + this + ` = ?
			UNION SELECT u.` + next + ` FROM md_uses u JOIN r ON u.` + this + ` = r.id)
			SELECT ` + objectMeta + ` FROM md_objects WHERE project_id = ? AND id IN (SELECT id FROM r) AND id <> ? ORDER BY id`
		return scanObjects(s.r.QueryContext(ctx, q, id, projectID, id))
	}
	return scanObjects(s.r.QueryContext(ctx, q, projectID, id))
}

// ModelUse is a use of a model object by an object outside the model.
type ModelUse struct {
	Identifier string // of the model object
	User       Object
}

// ModelUses lists the uses of the project's model objects by objects outside the model.
func (s *Store) ModelUses(ctx context.Context, projectID string) ([]ModelUse, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m.identifier, `+prefixed("o", objectMeta)+` FROM md_uses u
		JOIN md_objects m ON m.id = u.to_id JOIN md_objects o ON o.id = u.from_id
		WHERE m.project_id = ? AND m.in_model = 1 AND o.in_model = 0 ORDER BY m.identifier, o.id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("model uses: %w", err)
	}
	defer rows.Close()
	var out []ModelUse
	for rows.Next() {
		var u ModelUse
		var created, updated int64
		o := &u.User
		if err := rows.Scan(&u.Identifier, &o.ID, &o.ProjectID, &o.Category, &o.Identifier, &o.InModel, &o.Title, &o.Summary,
			&o.Tags, &o.Deprecated, &o.Author, &o.Contributor, &created, &updated); err != nil {
			return nil, fmt.Errorf("model uses: %w", err)
		}
		o.Created, o.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
		out = append(out, u)
	}
	return out, rows.Err()
}

func prefixed(alias, columns string) string {
	return alias + "." + strings.ReplaceAll(columns, ", ", ", "+alias+".")
}

// ModelObjectIDs returns the ids of the project's model objects by identifier.
func (s *Store) ModelObjectIDs(ctx context.Context, projectID string) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT identifier, id FROM md_objects WHERE project_id = ? AND in_model = 1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("model object ids: %w", err)
	}
	defer rows.Close()
	ids := map[string]int64{}
	for rows.Next() {
		var ident string
		var id int64
		if err := rows.Scan(&ident, &id); err != nil {
			return nil, fmt.Errorf("model object ids: %w", err)
		}
		ids[ident] = id
	}
	return ids, rows.Err()
}
