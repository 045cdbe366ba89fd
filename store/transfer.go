package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ImportedObject is a user's object (metric, report definition, report) to write by
// identifier: a new object, or the replacement of the project's object that has its
// identifier and category. ID and ProjectID are ignored.
type ImportedObject struct {
	Object
	// Uses are the identifiers of the objects it uses.
	Uses []string
}

// MetadataImport is a set of writes to a project's metadata done in one transaction.
type MetadataImport struct {
	// Model, when set, is a new model of the project, saved as SaveModel does.
	Model *ModelChange
	// Objects are written in order. A new object gets every field of its Object; a
	// replaced one keeps its id, author and created time.
	Objects []ImportedObject
	// Content returns the content to store for an object, once every object of the
	// project, old and new, has an id: ids gives them by identifier.
	Content func(o *ImportedObject, ids map[string]int64) ([]byte, error)
}

// ImportMetadata writes imp in one transaction, calling commit just before committing
// as SaveModel does, and returns the ids of the project's objects by identifier. An
// object whose identifier the project has for an object of the data model or of another
// category is ErrConflict; a use of an identifier the project lacks is ErrNotFound.
func (s *Store) ImportMetadata(ctx context.Context, projectID string, imp MetadataImport, commit func() error) (map[string]int64, error) {
	var ids map[string]int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if imp.Model != nil {
			if _, err := saveModel(ctx, tx, *imp.Model); err != nil {
				return err
			}
		}
		var err error
		if ids, err = placeObjects(ctx, tx, projectID, imp.Objects); err != nil {
			return err
		}
		for i := range imp.Objects {
			if err := writeImported(ctx, tx, &imp.Objects[i], ids, imp.Content); err != nil {
				return err
			}
		}
		if commit != nil {
			return commit()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// placeObjects gives every imported object an id: the id of the project's object with its
// identifier, or that of a new row. It returns the ids of all the project's objects, and
// sets ID on each imported object.
func placeObjects(ctx context.Context, tx *sql.Tx, projectID string, objs []ImportedObject) (map[string]int64, error) {
	type existing struct {
		id       int64
		category string
		inModel  bool
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, identifier, category, in_model FROM md_objects WHERE project_id = ?`, projectID)
	if err != nil {
		return nil, fmt.Errorf("import objects: %w", err)
	}
	have := map[string]existing{}
	for rows.Next() {
		var e existing
		var ident string
		if err := rows.Scan(&e.id, &ident, &e.category, &e.inModel); err != nil {
			rows.Close()
			return nil, fmt.Errorf("import objects: %w", err)
		}
		have[ident] = e
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("import objects: %w", err)
	}
	ids := make(map[string]int64, len(have)+len(objs))
	for ident, e := range have {
		ids[ident] = e.id
	}
	for i := range objs {
		o := &objs[i]
		o.ProjectID = projectID
		if e, ok := have[o.Identifier]; ok {
			if e.inModel || e.category != o.Category {
				return nil, fmt.Errorf("import %s: the project has a %s with that identifier: %w", o.Identifier, e.category, ErrConflict)
			}
			o.ID = e.id
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO md_objects(project_id, category, identifier, in_model, title, summary, tags,
			deprecated, author, contributor, created, updated) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)`,
			projectID, o.Category, o.Identifier, o.Title, o.Summary, o.Tags, boolInt(o.Deprecated), o.Author, o.Contributor,
			o.Created.Unix(), o.Updated.Unix())
		if isUnique(err) {
			return nil, fmt.Errorf("import %s: identifier given twice: %w", o.Identifier, ErrConflict)
		}
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", o.Identifier, err)
		}
		if o.ID, err = res.LastInsertId(); err != nil {
			return nil, err
		}
		ids[o.Identifier] = o.ID
		have[o.Identifier] = existing{id: o.ID, category: o.Category}
	}
	return ids, nil
}

// writeImported stores the meta, content and uses of an imported object that has its id.
func writeImported(ctx context.Context, tx *sql.Tx, o *ImportedObject, ids map[string]int64,
	content func(*ImportedObject, map[string]int64) ([]byte, error)) error {
	if content != nil {
		c, err := content(o, ids)
		if err != nil {
			return err
		}
		o.Content = c
	}
	if len(o.Content) == 0 {
		o.Content = []byte("{}")
	}
	_, err := tx.ExecContext(ctx, `UPDATE md_objects SET title = ?, summary = ?, tags = ?, deprecated = ?, content = ?,
		contributor = ?, updated = ? WHERE id = ?`, o.Title, o.Summary, o.Tags, boolInt(o.Deprecated), string(o.Content),
		o.Contributor, o.Updated.Unix(), o.ID)
	if err != nil {
		return fmt.Errorf("import %s: %w", o.Identifier, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM md_uses WHERE from_id = ?`, o.ID); err != nil {
		return fmt.Errorf("import %s: %w", o.Identifier, err)
	}
	uses := make([]int64, 0, len(o.Uses))
	for _, u := range o.Uses {
		id, ok := ids[u]
		if !ok {
			return fmt.Errorf("import %s: it uses %s, which the project does not have: %w", o.Identifier, u, ErrNotFound)
		}
		uses = append(uses, id)
	}
	return putUses(ctx, tx, o.ID, uses)
}

// ProjectObjects returns every object of the project with its content, oldest first, and
// the ids of the objects each uses.
func (s *Store) ProjectObjects(ctx context.Context, projectID string) ([]Object, map[int64][]int64, error) {
	objs, err := queryAll(ctx, s.r, func(row scanner) (Object, error) { return scanObject(row, true) },
		`SELECT `+objectMeta+`, content FROM md_objects WHERE project_id = ? ORDER BY id`, projectID)
	if err != nil {
		return nil, nil, fmt.Errorf("project objects: %w", err)
	}
	pairs, err := queryAll(ctx, s.r, func(row scanner) ([2]int64, error) {
		var p [2]int64
		return p, row.Scan(&p[0], &p[1])
	}, `SELECT u.from_id, u.to_id FROM md_uses u JOIN md_objects o ON o.id = u.from_id WHERE o.project_id = ?
		ORDER BY u.from_id, u.to_id`, projectID)
	if err != nil {
		return nil, nil, fmt.Errorf("project object uses: %w", err)
	}
	uses := map[int64][]int64{}
	for _, p := range pairs {
		uses[p[0]] = append(uses[p[0]], p[1])
	}
	return objs, uses, nil
}

// CountObjects returns how many objects the project has, of its model or not.
func (s *Store) CountObjects(ctx context.Context, projectID string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM md_objects WHERE project_id = ?`, projectID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count objects: %w", err)
	}
	return n, nil
}
