package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/store"
)

// Summary is the result of an export or import task: what it did, in words.
type Summary struct {
	Msg string `json:"msg"`
}

func jsonOf(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return data, nil
}

// ExportOptions say what a project export takes besides the model and the objects.
type ExportOptions struct {
	Users bool // the project's members and their roles
	Data  bool // the rows of the warehouse's tables
	// Authorized are logins that may import the archive, besides the exporter and the
	// domain's admins.
	Authorized []string
}

// ExportProject starts writing the project into an archive and returns the token that
// names it. Channels and subscriptions belong to users and are not part of it.
func (s *Service) ExportProject(ctx context.Context, c Caller, pid string, opt ExportOptions) (Artifact, error) {
	return s.startExport(ctx, c, pid, KindExport, store.ArtifactProject, opt.Authorized, func(ctx context.Context, path string) ([]byte, error) {
		dir, err := os.MkdirTemp(s.md.TempDir(), "export-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		dataDir := ""
		if opt.Data {
			dataDir = dir
		}
		snap, err := s.md.TakeSnapshot(ctx, pid, dataDir)
		if err != nil {
			return nil, err
		}
		a := archive{Manifest: manifest{Kind: store.ArtifactProject, Project: pid, Created: s.cfg.Clock.Now(), Users: opt.Users, Data: opt.Data},
			Snapshot: snap}
		if opt.Users {
			if a.Members, err = s.members(ctx, pid); err != nil {
				return nil, err
			}
		}
		if err := writeArchive(path, a, dir); err != nil {
			return nil, err
		}
		return jsonOf(Summary{Msg: describe("Exported", snap, len(a.Members), opt.Users)})
	})
}

// describe says how much a snapshot holds.
func describe(verb string, snap *analytics.Snapshot, members int, users bool) string {
	objects, rows := 0, int64(0)
	for _, o := range snap.Objects {
		if !o.InModel {
			objects++
		}
	}
	for _, t := range snap.Tables {
		rows += t.Rows
	}
	msg := fmt.Sprintf("%s the model, %d objects and %d tables with %d rows", verb, objects, len(snap.Tables), rows)
	if users {
		msg += fmt.Sprintf(", and %d users", members)
	}
	return msg
}

// members lists the project's members by login.
func (s *Service) members(ctx context.Context, pid string) ([]member, error) {
	list, err := s.st.Members(ctx, pid)
	if err != nil {
		return nil, err
	}
	out := make([]member, 0, len(list))
	for _, m := range list {
		filters, err := s.st.UserFilters(ctx, pid, m.User.ID)
		if err != nil {
			return nil, err
		}
		mb := member{Login: m.User.Login, Status: m.Status, Roles: m.Roles}
		for _, f := range filters {
			mb.UserFilters = append(mb.UserFilters, f.Identifier)
		}
		out = append(out, mb)
	}
	return out, nil
}

// ImportProject starts importing the archive the token names into the empty project pid.
// A token the caller may not use, or that expired, is a *TokenError; a project with a
// model or objects is analytics.ErrNotEmpty.
func (s *Service) ImportProject(ctx context.Context, c Caller, pid, token string) (store.Task, error) {
	art, err := s.artifact(ctx, c, token, store.ArtifactProject)
	if err != nil {
		return store.Task{}, err
	}
	if empty, err := s.md.Empty(ctx, pid); err != nil || !empty {
		if err == nil {
			err = analytics.ErrNotEmpty
		}
		return store.Task{}, err
	}
	return s.pool.Start(ctx, store.Task{ProjectID: pid, Kind: KindImport, StartedBy: c.UserID}, func(ctx context.Context) ([]byte, error) {
		sum, err := s.importProject(ctx, c, pid, art)
		if err != nil {
			return nil, taskError(err)
		}
		return jsonOf(sum)
	})
}

func (s *Service) importProject(ctx context.Context, c Caller, pid string, art store.Artifact) (Summary, error) {
	dir, err := os.MkdirTemp(s.md.TempDir(), "import-*")
	if err != nil {
		return Summary{}, err
	}
	defer os.RemoveAll(dir)
	a, err := readArchive(art.Path, dir)
	if err != nil {
		return Summary{}, err
	}
	if a.Manifest.Kind != store.ArtifactProject {
		return Summary{}, fmt.Errorf("%w: it is not the export of a project", errDamaged)
	}
	if err := s.md.Restore(ctx, pid, c.UserID, a.Snapshot, dir); err != nil {
		return Summary{}, err
	}
	sum := Summary{Msg: describe("Imported", a.Snapshot, len(a.Members), a.Manifest.Users)}
	if a.Manifest.Users {
		// The data permissions first: no member is added without the filters they had.
		if err := s.importUserFilters(ctx, pid, a.Members); err != nil {
			return Summary{}, err
		}
		skipped, err := s.importMembers(ctx, c, pid, a.Members)
		if err != nil {
			return Summary{}, err
		}
		if len(skipped) > 0 {
			sum.Msg += "; not added (no such user in the domain, or an invalid membership): " + strings.Join(skipped, ", ")
		}
	}
	return sum, nil
}

// importUserFilters assigns the members of an export, who exist in the domain, the
// user filters they had, by identifier among the imported objects.
func (s *Service) importUserFilters(ctx context.Context, pid string, members []member) error {
	for _, m := range members {
		if len(m.UserFilters) == 0 {
			continue
		}
		u, err := s.st.UserByLogin(ctx, m.Login)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		objs, err := s.st.ObjectsByIdentifiers(ctx, pid, m.UserFilters)
		if err != nil {
			return err
		}
		if len(objs) != len(m.UserFilters) {
			return fmt.Errorf("%w: the user filters of %s are not all in it", errDamaged, m.Login)
		}
		ids := make([]int64, len(objs))
		for i, o := range objs {
			ids[i] = o.ID
		}
		if err := s.st.SetUserFilters(ctx, pid, u.ID, ids); err != nil {
			return err
		}
	}
	return nil
}

// importMembers adds the members of an export to the project with their roles and
// statuses, leaving the importer's own membership as it is. It returns the logins it
// could not add.
func (s *Service) importMembers(ctx context.Context, c Caller, pid string, members []member) ([]string, error) {
	var skipped []string
	var changes []store.MemberChange
	var logins []string
	for _, m := range members {
		u, err := s.st.UserByLogin(ctx, m.Login)
		switch {
		case errors.Is(err, store.ErrNotFound):
			skipped = append(skipped, m.Login)
			continue
		case err != nil:
			return nil, err
		}
		if u.ID == c.UserID {
			continue
		}
		if m.Status != store.MemberEnabled && m.Status != store.MemberDisabled {
			skipped = append(skipped, m.Login)
			continue
		}
		changes = append(changes, store.MemberChange{UserID: u.ID, Status: m.Status, Roles: m.Roles, Add: true})
		logins = append(logins, m.Login)
	}
	results, err := s.st.ApplyMemberChanges(ctx, pid, s.cfg.AdminRole, changes, s.cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	for i, r := range results {
		if r != nil {
			skipped = append(skipped, logins[i])
		}
	}
	return skipped, nil
}

// taskError turns what an import found wrong into the message its task reports.
func taskError(err error) error {
	var (
		missing  *analytics.MissingObjectError
		conflict *analytics.ConflictError
	)
	switch {
	case errors.As(err, &missing):
		return task.Errorf("The object with uri (%s) doesn't exists.", missing.URI)
	case errors.As(err, &conflict):
		return task.Errorf("%s", conflict.Msg)
	case errors.Is(err, analytics.ErrNotEmpty):
		return task.Errorf("The project is not empty; a project can be imported only into a new, empty project.")
	case errors.Is(err, errDamaged):
		return task.Errorf("The archive cannot be read: %s", err.Error())
	}
	return err
}
