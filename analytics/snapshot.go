package analytics

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/store"
)

// Snapshot is a project's metadata as an export carries it: the whole model, or only
// some objects with everything they use. The contents of objects name other objects by
// their URIs in the project the snapshot was taken from; Objects has every object they
// name.
type Snapshot struct {
	// Project is the project the snapshot was taken from.
	Project string `json:"project"`
	// Model is the project's whole model; empty in a snapshot of some objects.
	Model   json.RawMessage  `json:"model,omitempty"`
	Objects []SnapshotObject `json:"objects"`
	// Tables are the warehouse's tables, written to Parquet files beside the snapshot.
	Tables []SnapshotTable `json:"tables,omitempty"`
}

// SnapshotObject is one object of a snapshot: a model object by its meta, or a user's
// object with its content.
type SnapshotObject struct {
	ID          int64           `json:"id"`
	Category    string          `json:"category"`
	Identifier  string          `json:"identifier"`
	InModel     bool            `json:"inModel,omitempty"`
	Title       string          `json:"title"`
	Summary     string          `json:"summary,omitempty"`
	Tags        string          `json:"tags,omitempty"`
	Deprecated  bool            `json:"deprecated,omitempty"`
	Author      string          `json:"author"`
	Contributor string          `json:"contributor"`
	Created     time.Time       `json:"created"`
	Updated     time.Time       `json:"updated"`
	Content     json.RawMessage `json:"content,omitempty"`
	// Uses are the ids of the objects a user's object uses.
	Uses []int64 `json:"uses,omitempty"`
}

// URI is the object's URI in the project it was taken from.
func (o SnapshotObject) URI(project string) string { return ObjectURI(project, o.ID) }

// SnapshotTable is a table of the warehouse written to a Parquet file.
type SnapshotTable struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
	Rows   int64  `json:"rows"`
	// File is the file's name, in the folder the snapshot's data was written to.
	File string `json:"file"`
}

// TempDir is a folder where the warehouse may write and read files: the data of
// TakeSnapshot goes to, and the data of Restore must come from, a folder inside it.
func (s *Service) TempDir() string { return s.wh.TempDir() }

// TakeSnapshot returns the project's whole model and every object. With a dataDir
// (inside TempDir) it also writes each table of the project's warehouse to a Parquet
// file there. It all happens while the project cannot change, so the parts agree.
func (s *Service) TakeSnapshot(ctx context.Context, pid, dataDir string) (*Snapshot, error) {
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return nil, err
	}
	defer unlock()
	stored, err := s.store.ProjectModel(ctx, pid)
	if err != nil {
		return nil, err
	}
	m, err := ldm.Decode(stored.Doc)
	if err != nil {
		return nil, err
	}
	objs, uses, err := s.store.ProjectObjects(ctx, pid)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Project: pid, Model: stored.Doc, Objects: make([]SnapshotObject, 0, len(objs))}
	for _, o := range objs {
		snap.Objects = append(snap.Objects, snapshotObject(o, uses[o.ID]))
	}
	if dataDir == "" {
		return snap, nil
	}
	dumped, err := s.wh.Dump(ctx, pid, dataDir, func(schema, name string) bool { return modelTable(m, schema, name) })
	if err != nil {
		return nil, err
	}
	for _, d := range dumped {
		snap.Tables = append(snap.Tables, SnapshotTable{Schema: d.Schema, Name: d.Name, Rows: d.Rows, File: filepath.Base(d.Path)})
	}
	return snap, nil
}

// modelTable reports whether a table of the warehouse is one the model has: a dataset's
// table or the element lookup of one of its keys.
func modelTable(m *ldm.Model, schema, name string) bool {
	for _, t := range m.Tables {
		if schema == warehouse.SchemaMain && name == t.Name {
			return true
		}
		for _, c := range t.Columns {
			if schema == warehouse.SchemaHerald && warehouse.HasLookup(c) && name == warehouse.LookupName(t.Name, c.Name) {
				return true
			}
		}
	}
	return false
}

func snapshotObject(o store.Object, uses []int64) SnapshotObject {
	out := SnapshotObject{ID: o.ID, Category: o.Category, Identifier: o.Identifier, InModel: o.InModel, Title: o.Title,
		Summary: o.Summary, Tags: o.Tags, Deprecated: o.Deprecated, Author: o.Author, Contributor: o.Contributor,
		Created: o.Created, Updated: o.Updated}
	if !o.InModel {
		out.Content, out.Uses = o.Content, uses
	}
	return out
}

// SnapshotObjects returns the objects with the URIs and every object they use, directly
// or through others: a report brings its definitions, their metrics, and the facts,
// attributes, labels and datasets these use. A URI that names no object of the project
// is a *MissingObjectError. User filters are left out: an editor exports and imports
// objects, and data permissions are for the project's admins alone.
func (s *Service) SnapshotObjects(ctx context.Context, pid string, uris []string) (*Snapshot, error) {
	roots := make([]int64, len(uris))
	for i, u := range uris {
		id, err := parseObjectURI(pid, u)
		if err != nil {
			return nil, &MissingObjectError{URI: u}
		}
		roots[i] = id
	}
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return nil, err
	}
	defer unlock()
	objs, uses, err := s.store.ProjectObjects(ctx, pid)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]store.Object, len(objs))
	for _, o := range objs {
		byID[o.ID] = o
	}
	for i, id := range roots {
		if _, ok := byID[id]; !ok {
			return nil, &MissingObjectError{URI: uris[i]}
		}
	}
	seen := map[int64]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		queue = append(queue, uses[id]...)
	}
	snap := &Snapshot{Project: pid}
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		o, ok := byID[id]
		if !ok {
			return nil, &MissingObjectError{URI: ObjectURI(pid, id)}
		}
		if o.Category == CategoryUserFilter {
			continue // data permissions are the project admin's: they travel with the whole project only
		}
		snap.Objects = append(snap.Objects, snapshotObject(o, uses[id]))
	}
	return snap, nil
}

// objectURIPattern finds the object URIs in a content: element URIs begin with one.
var objectURIPattern = regexp.MustCompile(`/svc/md/([a-z0-9]+)/obj/([0-9]+)`)

// rewriteURIs replaces the URIs of the project from's objects in content with what to
// returns for their ids.
func rewriteURIs(content []byte, from string, to func(id int64) (string, error)) ([]byte, error) {
	var failed error
	out := objectURIPattern.ReplaceAllFunc(content, func(m []byte) []byte {
		sub := objectURIPattern.FindSubmatch(m)
		if string(sub[1]) != from || failed != nil {
			return m
		}
		id, err := strconv.ParseInt(string(sub[2]), 10, 64)
		if err != nil {
			failed = fmt.Errorf("object URI %s: %w", m, err)
			return m
		}
		uri, err := to(id)
		if err != nil {
			failed = err
			return m
		}
		return []byte(uri)
	})
	return out, failed
}
