package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var maintT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// openProjectStore opens a store with one user (u1) and one project (p1).
func openProjectStore(t *testing.T) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.EnsureDomain(ctx, "default", maintT0); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, User{ID: "u1", Domain: "default", Login: "u1@example.com", PasswordHash: "x",
		Created: maintT0, Updated: maintT0}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p1", "p2"} {
		if err := s.CreateProject(ctx, Project{ID: p, Title: "P", State: ProjectEnabled, Author: "u1", Contributor: "u1",
			Created: maintT0, Updated: maintT0}, "adminRole"); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestTaskLifecycle(t *testing.T) {
	t.Parallel()
	s := openProjectStore(t)
	ctx := context.Background()
	for _, id := range []string{"t1", "t2", "t3"} {
		if err := s.CreateTask(ctx, Task{ID: id, ProjectID: "p1", Kind: "k", Status: TaskRunning, StartedBy: "u1", Created: maintT0}); err != nil {
			t.Fatal(err)
		}
	}
	done := Task{ID: "t1", Status: TaskOK, Result: []byte(`{"n":1}`), Finished: maintT0.Add(time.Minute)}
	if err := s.FinishTask(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTask(ctx, done); !errors.Is(err, ErrNotFound) {
		t.Fatalf("finishing a finished task: %v", err)
	}
	if err := s.FinishTask(ctx, Task{ID: "t2", Status: TaskRunning}); err == nil {
		t.Fatal("finishing as RUNNING: no error")
	}

	n, err := s.AbandonTasks(ctx, []byte(`[{"error":{"message":"cut off"}}]`), maintT0.Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("abandoned %d, %v; want 2", n, err)
	}
	if err := s.FinishTask(ctx, Task{ID: "t2", Status: TaskOK, Finished: maintT0}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("finishing an abandoned task: %v", err)
	}

	tests := []struct {
		id, status, messages, result string
		finished                     time.Time
	}{
		{"t1", TaskOK, "[]", `{"n":1}`, maintT0.Add(time.Minute)},
		{"t2", TaskError, `[{"error":{"message":"cut off"}}]`, "", maintT0.Add(time.Hour)},
		{"t3", TaskError, `[{"error":{"message":"cut off"}}]`, "", maintT0.Add(time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			got, err := s.TaskByID(ctx, "p1", tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.status || string(got.Messages) != tc.messages || string(got.Result) != tc.result ||
				!got.Finished.Equal(tc.finished) || got.StartedBy != "u1" || got.Kind != "k" {
				t.Fatalf("task %+v", got)
			}
		})
	}
	if _, err := s.TaskByID(ctx, "p2", "t1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("task of another project: %v", err)
	}
}

func TestArtifacts(t *testing.T) {
	t.Parallel()
	s := openProjectStore(t)
	ctx := context.Background()
	if err := s.CreateTask(ctx, Task{ID: "t1", ProjectID: "p1", Kind: "export", Status: TaskRunning, Created: maintT0}); err != nil {
		t.Fatal(err)
	}
	a := Artifact{TokenHash: []byte("hash-1"), Kind: ArtifactProject, ProjectID: "p1", TaskID: "t1", Path: "/d/a.tar",
		Author: "u1", Authorized: []string{"b@x.io"}, Created: maintT0, Expires: maintT0.Add(48 * time.Hour)}
	if err := s.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.ArtifactByToken(ctx, []byte("hash-1"))
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("artifact %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.ArtifactByToken(ctx, []byte("hash-2")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		{"before", maintT0.Add(47 * time.Hour), 0},
		{"at expiry", maintT0.Add(48 * time.Hour), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := s.ExpiredArtifacts(ctx, tc.at)
			if err != nil || len(list) != tc.want {
				t.Fatalf("expired %d, %v; want %d", len(list), err, tc.want)
			}
		})
	}
	if err := s.DeleteArtifact(ctx, a.TokenHash); err != nil {
		t.Fatal(err)
	}
	if paths, err := s.ArtifactPaths(ctx); err != nil || len(paths) != 0 {
		t.Fatalf("paths after delete: %v %v", paths, err)
	}
}

// saveModelObjects stores a model with the given objects (identifier → category).
func saveTestModel(t *testing.T, s *Store, pid string, objs map[string]string) {
	t.Helper()
	c := ModelChange{ProjectID: pid, Doc: []byte(`{}`), By: "u1", At: maintT0}
	for ident, cat := range objs {
		c.Objects = append(c.Objects, ModelObject{Category: cat, Identifier: ident, Title: ident})
	}
	if _, err := s.SaveModel(context.Background(), c, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestImportMetadata(t *testing.T) {
	t.Parallel()
	s := openProjectStore(t)
	ctx := context.Background()
	saveTestModel(t, s, "p1", map[string]string{"fact.a": "fact"})
	old, err := s.CreateObject(ctx, Object{ProjectID: "p1", Category: "metric", Identifier: "m.old", Title: "Old",
		Content: []byte(`{}`), Author: "u0", Contributor: "u0", Created: maintT0, Updated: maintT0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	later := maintT0.Add(time.Hour)
	imp := MetadataImport{
		Objects: []ImportedObject{
			{Object: Object{Category: "metric", Identifier: "m.new", Title: "New", Author: "u1", Contributor: "u1",
				Created: later, Updated: later}, Uses: []string{"fact.a"}},
			{Object: Object{Category: "metric", Identifier: "m.old", Title: "Replaced", Author: "u1", Contributor: "u1",
				Created: later, Updated: later}, Uses: []string{"m.new"}},
		},
		Content: func(o *ImportedObject, ids map[string]int64) ([]byte, error) {
			return fmt.Appendf(nil, `{"uses":%d}`, ids[o.Uses[0]]), nil
		},
	}
	ids, err := s.ImportMetadata(ctx, "p1", imp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids["m.old"] != old || ids["m.new"] == 0 || ids["fact.a"] == 0 {
		t.Fatalf("ids %v (old %d)", ids, old)
	}
	replaced, _ := s.ObjectByID(ctx, "p1", old)
	if replaced.Title != "Replaced" || replaced.Author != "u0" || !replaced.Created.Equal(maintT0) ||
		!replaced.Updated.Equal(later) || replaced.Contributor != "u1" || string(replaced.Content) != fmt.Sprintf(`{"uses":%d}`, ids["m.new"]) {
		t.Fatalf("replaced object %+v", replaced)
	}
	created, _ := s.ObjectByID(ctx, "p1", ids["m.new"])
	if created.Author != "u1" || !created.Created.Equal(later) || string(created.Content) != fmt.Sprintf(`{"uses":%d}`, ids["fact.a"]) {
		t.Fatalf("new object %+v", created)
	}
	uses, _ := s.Uses(ctx, "p1", old, true)
	if len(uses) != 2 {
		t.Fatalf("m.old uses %v, want m.new and fact.a", uses)
	}
}

func TestImportMetadataIsAtomic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		objs    []ImportedObject
		content error
		commit  error
		want    error
	}{
		{"identifier of a model object", []ImportedObject{{Object: Object{Category: "metric", Identifier: "fact.a"}}}, nil, nil, ErrConflict},
		{"unknown use", []ImportedObject{{Object: Object{Category: "metric", Identifier: "m.x"}, Uses: []string{"nope"}}}, nil, nil, ErrNotFound},
		{"content fails", []ImportedObject{{Object: Object{Category: "metric", Identifier: "m.x"}}}, errors.New("bad content"), nil, nil},
		{"commit fails", []ImportedObject{{Object: Object{Category: "metric", Identifier: "m.x"}}}, nil, errors.New("warehouse"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openProjectStore(t)
			ctx := context.Background()
			saveTestModel(t, s, "p1", map[string]string{"fact.a": "fact"})
			imp := MetadataImport{
				Model: &ModelChange{ProjectID: "p1", Doc: []byte(`{"changed":true}`), By: "u1", At: maintT0,
					Objects: []ModelObject{{Category: "fact", Identifier: "fact.a", Title: "A"}, {Category: "fact", Identifier: "fact.b", Title: "B"}}},
				Objects: tc.objs,
				Content: func(*ImportedObject, map[string]int64) ([]byte, error) { return []byte(`{}`), tc.content },
			}
			_, err := s.ImportMetadata(ctx, "p1", imp, func() error { return tc.commit })
			for _, want := range []error{tc.want, tc.content, tc.commit} {
				if want != nil && !errors.Is(err, want) {
					t.Fatalf("err %v, want %v", err, want)
				}
			}
			if err == nil {
				t.Fatal("no error")
			}
			m, _ := s.ProjectModel(ctx, "p1")
			if strings.Contains(string(m.Doc), "changed") || m.ModelVersion != 1 {
				t.Fatalf("the model changed: %s v%d", m.Doc, m.ModelVersion)
			}
			if objs, _ := s.ObjectsByIdentifiers(ctx, "p1", []string{"fact.b", "m.x"}); len(objs) != 0 {
				t.Fatalf("objects written: %v", objs)
			}
		})
	}
}
