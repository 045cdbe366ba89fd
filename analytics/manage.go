package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/store"
)

// TaskManage is the kind of the task of a model change.
const TaskManage = "ldm.manage"

// Manage applies a MAQL script to the project's model and warehouse as one transaction
// and returns the id of the finished task. A syntax error is a *maql.Error; a statement
// that cannot be applied is a *ldm.StmtError naming its line, and then nothing changed.
func (s *Service) Manage(ctx context.Context, pid, by, script string) (string, error) {
	stmts, err := maql.ParseScript(script)
	if err != nil {
		return "", err
	}
	if len(stmts) == 0 {
		return "", invalid("manage.maql", "has no statements")
	}
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return "", err
	}
	defer unlock()
	pm, err := s.model(ctx, pid)
	if err != nil {
		return "", err
	}
	opt, err := s.applyOptions(ctx, pid)
	if err != nil {
		return "", err
	}
	next, steps, err := ldm.Apply(pm.model, stmts, opt)
	if err != nil {
		return "", err
	}
	tx, err := s.wh.Begin(ctx, pid)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if err := tx.Apply(ctx, steps); err != nil {
		return "", err
	}
	doc, err := json.Marshal(next)
	if err != nil {
		return "", fmt.Errorf("encode model: %w", err)
	}
	now := s.now()
	change := store.ModelChange{
		ProjectID: pid, Doc: doc, By: by, At: now,
		Task: store.Task{ID: store.NewID(24), ProjectID: pid, Kind: TaskManage, Status: store.TaskOK, Created: now, Finished: now},
	}
	for _, o := range next.Objects() {
		change.Objects = append(change.Objects, store.ModelObject{Category: string(o.Kind), Identifier: o.Identifier,
			Title: o.Meta.Title, Summary: o.Meta.Description, Tags: o.Meta.Tags})
	}
	for _, d := range next.Dependencies() {
		change.Uses = append(change.Uses, [2]string{d.From, d.To})
	}
	if _, err := s.store.SaveModel(ctx, change, tx.Commit); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return "", &ConflictError{Msg: err.Error()}
		}
		return "", err
	}
	return change.Task.ID, nil
}

// applyOptions tells the model about the project's other objects: their identifiers are
// taken, and the model objects they use cannot be dropped.
func (s *Service) applyOptions(ctx context.Context, pid string) (ldm.Options, error) {
	objs, err := s.store.UserObjects(ctx, pid)
	if err != nil {
		return ldm.Options{}, err
	}
	reserved := make(map[string]bool, len(objs))
	for _, o := range objs {
		reserved[o.Identifier] = true
	}
	uses, err := s.store.ModelUses(ctx, pid)
	if err != nil {
		return ldm.Options{}, err
	}
	usedBy := map[string][]string{}
	for _, u := range uses {
		usedBy[u.Identifier] = append(usedBy[u.Identifier],
			fmt.Sprintf("%s %q (%s)", u.User.Category, u.User.Title, ObjectURI(pid, u.User.ID)))
	}
	return ldm.Options{
		Reserved: func(id string) bool { return reserved[id] },
		UsedBy:   func(id string) string { return strings.Join(usedBy[id], ", ") },
	}, nil
}

// Task returns a task of the project.
func (s *Service) Task(ctx context.Context, pid, id string) (store.Task, error) {
	t, err := s.store.TaskByID(ctx, pid, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Task{}, &NotFoundError{Kind: "task", ID: id}
	}
	return t, err
}
