package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/store"
)

// MissingObjectError is an object that a snapshot, or a request for one, names and that
// is not there.
type MissingObjectError struct {
	URI string
}

func (e *MissingObjectError) Error() string {
	return fmt.Sprintf("The object with uri (%s) doesn't exists.", e.URI)
}

// ErrNotEmpty is returned when a whole project is restored into one that has a model or
// objects.
var ErrNotEmpty = errors.New("the project is not empty; a project can be imported only into a new, empty project")

// Empty reports whether the project has neither a model nor objects.
func (s *Service) Empty(ctx context.Context, pid string) (bool, error) {
	n, err := s.store.CountObjects(ctx, pid)
	return n == 0, err
}

// Restore makes the empty project pid a copy of a snapshot of a whole project: its model,
// its objects (with their authors and times) and, when the snapshot has them, the rows of
// its tables from the Parquet files in dataDir (inside TempDir). It all commits, or
// nothing does.
func (s *Service) Restore(ctx context.Context, pid, by string, snap *Snapshot, dataDir string) error {
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return err
	}
	defer unlock()
	if empty, err := s.Empty(ctx, pid); err != nil || !empty {
		return cmpErr(err, ErrNotEmpty)
	}
	m, err := ldm.Decode(snap.Model)
	if err != nil {
		return err
	}
	tx, err := s.wh.Begin(ctx, pid)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var steps []ldm.Step
	for _, name := range sortedTables(m) {
		steps = append(steps, ldm.Step{New: m.Tables[name]})
	}
	if err := tx.Apply(ctx, steps); err != nil {
		return err
	}
	for _, t := range snap.Tables {
		if !modelTable(m, t.Schema, t.Name) {
			continue
		}
		n, err := tx.Restore(ctx, t.Schema, t.Name, filepath.Join(dataDir, filepath.Base(t.File)))
		if err != nil {
			return err
		}
		if n != t.Rows {
			return fmt.Errorf("restore %s.%s: %d rows, the export has %d", t.Schema, t.Name, n, t.Rows)
		}
	}
	doc, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode model: %w", err)
	}
	change := modelChange(pid, by, s.now(), m, doc)
	imp := store.MetadataImport{Model: &change}
	r := newRestorer(snap, pid)
	for _, o := range snap.Objects {
		if o.InModel {
			continue
		}
		io, err := r.imported(o)
		if err != nil {
			return err
		}
		imp.Objects = append(imp.Objects, io)
	}
	imp.Content = r.content
	_, err = s.store.ImportMetadata(ctx, pid, imp, tx.Commit)
	return err
}

// modelChange is the store's change to a new model m encoded as doc.
func modelChange(pid, by string, at time.Time, m *ldm.Model, doc []byte) store.ModelChange {
	c := store.ModelChange{ProjectID: pid, Doc: doc, By: by, At: at}
	for _, o := range m.Objects() {
		c.Objects = append(c.Objects, store.ModelObject{Category: string(o.Kind), Identifier: o.Identifier,
			Title: o.Meta.Title, Summary: o.Meta.Description, Tags: o.Meta.Tags})
	}
	for _, d := range m.Dependencies() {
		c.Uses = append(c.Uses, [2]string{d.From, d.To})
	}
	return c
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// restorer writes the user's objects of a snapshot into a project.
type restorer struct {
	snap *Snapshot
	pid  string
	byID map[int64]SnapshotObject
	// contents are those of the objects to write, by identifier.
	contents map[string]json.RawMessage
}

func newRestorer(snap *Snapshot, pid string) *restorer {
	r := &restorer{snap: snap, pid: pid, byID: make(map[int64]SnapshotObject, len(snap.Objects)), contents: map[string]json.RawMessage{}}
	for _, o := range snap.Objects {
		r.byID[o.ID] = o
	}
	return r
}

// imported is the store's import of a user's object as the snapshot has it.
func (r *restorer) imported(o SnapshotObject) (store.ImportedObject, error) {
	io := store.ImportedObject{Object: store.Object{Category: o.Category, Identifier: o.Identifier, Title: o.Title,
		Summary: o.Summary, Tags: o.Tags, Deprecated: o.Deprecated, Author: o.Author, Contributor: o.Contributor,
		Created: o.Created, Updated: o.Updated}}
	for _, id := range o.Uses {
		used, ok := r.byID[id]
		if !ok {
			return io, &MissingObjectError{URI: ObjectURI(r.snap.Project, id)}
		}
		io.Uses = append(io.Uses, used.Identifier)
	}
	r.contents[o.Identifier] = o.Content
	return io, nil
}

// content is the content of an object with the snapshot's URIs rewritten to the objects
// of the project with the same identifiers.
func (r *restorer) content(o *store.ImportedObject, ids map[string]int64) ([]byte, error) {
	return rewriteURIs(r.contents[o.Identifier], r.snap.Project, func(id int64) (string, error) {
		src, ok := r.byID[id]
		if !ok {
			return "", &MissingObjectError{URI: ObjectURI(r.snap.Project, id)}
		}
		target, ok := ids[src.Identifier]
		if !ok {
			return "", &MissingObjectError{URI: ObjectURI(r.snap.Project, id)}
		}
		return ObjectURI(r.pid, target), nil
	})
}

// ObjectsOptions tune RestoreObjects.
type ObjectsOptions struct {
	// By is the user who restores.
	By string
	// OverwriteNewer replaces an object of the project even when it changed after the
	// snapshot's; otherwise such an object is kept.
	OverwriteNewer bool
	// UpdateModelMeta also sets the title, description and tags of the project's model
	// objects to the snapshot's.
	UpdateModelMeta bool
}

// ObjectsRestored says what RestoreObjects did with each user's object, by identifier.
type ObjectsRestored struct {
	Created, Replaced, Kept []string
	// ModelMeta lists the model objects whose meta changed.
	ModelMeta []string
}

// RestoreObjects writes the objects of a snapshot into the project, matched by
// identifier: a user's object the project lacks is created, one it has is replaced (or
// kept, see ObjectsOptions), and every model object the snapshot has must be in the
// project's model — when one is not, nothing is written and the error is a
// *MissingObjectError naming it in the snapshot's project. URIs in the contents are
// rewritten to the project's objects.
func (s *Service) RestoreObjects(ctx context.Context, pid string, snap *Snapshot, opt ObjectsOptions) (ObjectsRestored, error) {
	var done ObjectsRestored
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return done, err
	}
	defer unlock()
	idents := make([]string, len(snap.Objects))
	for i, o := range snap.Objects {
		idents[i] = o.Identifier
	}
	list, err := s.store.ObjectsByIdentifiers(ctx, pid, idents)
	if err != nil {
		return done, err
	}
	have := make(map[string]store.Object, len(list))
	for _, o := range list {
		have[o.Identifier] = o
	}
	pm, err := s.model(ctx, pid)
	if err != nil {
		return done, err
	}
	next := pm.model.Clone()
	r := newRestorer(snap, pid)
	now := s.now()
	var imp store.MetadataImport
	for _, o := range snap.Objects {
		if o.Category == CategoryUserFilter {
			continue // an editor imports objects; data permissions are for the project's admins alone
		}
		target, exists := have[o.Identifier]
		if o.InModel {
			if !exists || !target.InModel || target.Category != o.Category {
				return done, &MissingObjectError{URI: o.URI(snap.Project)}
			}
			if opt.UpdateModelMeta && setModelMeta(next, o) {
				done.ModelMeta = append(done.ModelMeta, o.Identifier)
			}
			continue
		}
		if exists && (target.InModel || target.Category != o.Category) {
			return done, &ConflictError{Msg: fmt.Sprintf("%s %s of the export has the identifier of the %s %s of this project",
				o.Category, o.URI(snap.Project), target.Category, ObjectURI(pid, target.ID))}
		}
		if exists && !opt.OverwriteNewer && target.Updated.After(o.Updated) {
			done.Kept = append(done.Kept, o.Identifier)
			continue
		}
		io, err := r.imported(o)
		if err != nil {
			return done, err
		}
		io.Author, io.Contributor, io.Created, io.Updated = opt.By, opt.By, now, now
		if exists {
			done.Replaced = append(done.Replaced, o.Identifier)
		} else {
			done.Created = append(done.Created, o.Identifier)
		}
		imp.Objects = append(imp.Objects, io)
	}
	if len(done.ModelMeta) > 0 {
		doc, err := json.Marshal(next)
		if err != nil {
			return done, fmt.Errorf("encode model: %w", err)
		}
		change := modelChange(pid, opt.By, now, next, doc)
		imp.Model = &change
	}
	imp.Content = r.content
	if _, err := s.store.ImportMetadata(ctx, pid, imp, nil); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return done, &ConflictError{Msg: err.Error()}
		}
		return done, err
	}
	return done, nil
}

// setModelMeta sets the title, description and tags of the model object with o's
// identifier to o's, and reports whether they changed.
func setModelMeta(m *ldm.Model, o SnapshotObject) bool {
	var meta *ldm.Meta
	switch {
	case m.Folders[o.Identifier] != nil:
		meta = &m.Folders[o.Identifier].Meta
	case m.Datasets[o.Identifier] != nil:
		meta = &m.Datasets[o.Identifier].Meta
	case m.Attributes[o.Identifier] != nil:
		meta = &m.Attributes[o.Identifier].Meta
	case m.Labels[o.Identifier] != nil:
		meta = &m.Labels[o.Identifier].Meta
	case m.Facts[o.Identifier] != nil:
		meta = &m.Facts[o.Identifier].Meta
	default:
		return false
	}
	want := ldm.Meta{Title: o.Title, Description: o.Summary, Tags: o.Tags}
	if *meta == want {
		return false
	}
	*meta = want
	return true
}
