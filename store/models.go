package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Model is the stored logical data model of a project.
type Model struct {
	Doc          []byte // JSON; empty for a project whose model was never changed
	ModelVersion int64
	DataVersion  int64
}

// ProjectModel returns the project's model; a project without one has an empty model at
// version 0.
func (s *Store) ProjectModel(ctx context.Context, projectID string) (Model, error) {
	var m Model
	var doc string
	err := s.r.QueryRowContext(ctx, `SELECT model, model_version, data_version FROM project_models WHERE project_id = ?`,
		projectID).Scan(&doc, &m.ModelVersion, &m.DataVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return Model{}, nil
	}
	if err != nil {
		return Model{}, fmt.Errorf("project model: %w", err)
	}
	m.Doc = []byte(doc)
	return m, nil
}

// ModelObject is an object of a data model as the metadata store keeps it.
type ModelObject struct {
	Category, Identifier, Title, Summary, Tags string
}

// ModelChange is a new data model of a project.
type ModelChange struct {
	ProjectID string
	Doc       []byte
	// Objects are every object of the new model; Uses the pairs of identifiers (from, to)
	// of the uses between them.
	Objects []ModelObject
	Uses    [][2]string
	// Task is recorded with the change.
	Task Task
	By   string // user id
	At   time.Time
}

// SaveModel stores a new model of a project in one transaction: the model, its objects
// (kept, changed, created or deleted by identifier; an identifier whose category changes
// gets a new object), their uses, the bumped versions and the task, when it has an id.
// Just before committing it calls commit, and rolls everything back when commit fails, so
// a second store can commit in step. It returns the new model version.
func (s *Store) SaveModel(ctx context.Context, c ModelChange, commit func() error) (int64, error) {
	var version int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if version, err = saveModel(ctx, tx, c); err != nil {
			return err
		}
		return commit()
	})
	return version, err
}

// saveModel is SaveModel inside a transaction.
func saveModel(ctx context.Context, tx *sql.Tx, c ModelChange) (int64, error) {
	ids, err := saveModelObjects(ctx, tx, c)
	if err != nil {
		return 0, err
	}
	for _, u := range c.Uses {
		from, to := ids[u[0]], ids[u[1]]
		if from == 0 || to == 0 {
			return 0, fmt.Errorf("save model: use %s -> %s names an object not in the model", u[0], u[1])
		}
		if err := putUses(ctx, tx, from, []int64{to}); err != nil {
			return 0, err
		}
	}
	var version int64
	err = tx.QueryRowContext(ctx, `INSERT INTO project_models(project_id, model, model_version, data_version, updated)
		VALUES (?, ?, 1, 1, ?) ON CONFLICT (project_id) DO UPDATE SET model = excluded.model,
		model_version = model_version + 1, data_version = data_version + 1, updated = excluded.updated
		RETURNING model_version`, c.ProjectID, string(c.Doc), c.At.Unix()).Scan(&version)
	if err != nil {
		return 0, fmt.Errorf("save model: %w", err)
	}
	if c.Task.ID != "" {
		if err := insertTask(ctx, tx, c.Task); err != nil {
			return 0, err
		}
	}
	return version, nil
}

// saveModelObjects brings the project's model objects in line with c.Objects and returns
// the ids of all of them by identifier.
func saveModelObjects(ctx context.Context, tx *sql.Tx, c ModelChange) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, category, identifier, title, summary, tags FROM md_objects
		WHERE project_id = ? AND in_model = 1`, c.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("save model: %w", err)
	}
	type row struct {
		id  int64
		obj ModelObject
	}
	old := map[string]row{}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.obj.Category, &r.obj.Identifier, &r.obj.Title, &r.obj.Summary, &r.obj.Tags); err != nil {
			rows.Close()
			return nil, fmt.Errorf("save model: %w", err)
		}
		old[r.obj.Identifier] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM md_uses WHERE from_id IN
		(SELECT id FROM md_objects WHERE project_id = ? AND in_model = 1)`, c.ProjectID); err != nil {
		return nil, fmt.Errorf("save model: %w", err)
	}
	keep := map[string]bool{}
	for _, o := range c.Objects {
		if r, ok := old[o.Identifier]; ok && r.obj.Category == o.Category {
			keep[o.Identifier] = true
		}
	}
	for ident, r := range old {
		if keep[ident] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM md_objects WHERE id = ?`, r.id); err != nil {
			if isForeignKey(err) {
				return nil, fmt.Errorf("save model: %s is still used: %w", ident, ErrConflict)
			}
			return nil, fmt.Errorf("save model: %w", err)
		}
	}
	ids := map[string]int64{}
	for _, o := range c.Objects {
		if keep[o.Identifier] {
			r := old[o.Identifier]
			ids[o.Identifier] = r.id
			if r.obj != o {
				if _, err := tx.ExecContext(ctx, `UPDATE md_objects SET title = ?, summary = ?, tags = ?, contributor = ?, updated = ?
					WHERE id = ?`, o.Title, o.Summary, o.Tags, c.By, c.At.Unix(), r.id); err != nil {
					return nil, fmt.Errorf("save model: %w", err)
				}
			}
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO md_objects(project_id, category, identifier, in_model, title, summary, tags,
			author, contributor, created, updated) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)`, c.ProjectID, o.Category,
			o.Identifier, o.Title, o.Summary, o.Tags, c.By, c.By, c.At.Unix(), c.At.Unix())
		if isUnique(err) {
			return nil, fmt.Errorf("save model: identifier %s is taken: %w", o.Identifier, ErrConflict)
		}
		if err != nil {
			return nil, fmt.Errorf("save model: %w", err)
		}
		if ids[o.Identifier], err = res.LastInsertId(); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// BumpDataVersion counts a data load of the project in one transaction, calling commit
// just before committing as SaveModel does, and returns the new data version.
func (s *Store) BumpDataVersion(ctx context.Context, projectID string, at time.Time, commit func() error) (int64, error) {
	var version int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE project_models SET data_version = data_version + 1, updated = ?
			WHERE project_id = ? RETURNING data_version`, at.Unix(), projectID).Scan(&version)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("bump data version: %w", err)
		}
		return commit()
	})
	return version, err
}

// ModelVersions returns the project's model and data versions, 0 for a project whose
// model was never changed.
func (s *Store) ModelVersions(ctx context.Context, projectID string) (model, data int64, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT model_version, data_version FROM project_models WHERE project_id = ?`,
		projectID).Scan(&model, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("model versions: %w", err)
	}
	return model, data, nil
}
