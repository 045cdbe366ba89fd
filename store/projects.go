package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Project states.
const (
	ProjectEnabled = "ENABLED"
	ProjectDeleted = "DELETED"
)

// Member statuses.
const (
	MemberEnabled  = "ENABLED"
	MemberDisabled = "DISABLED"
)

// Project is an analytics project.
type Project struct {
	ID               string
	Title            string
	Summary          string
	Template         string
	GuidedNavigation int
	IsPublic         bool
	State            string
	Author           string // user id
	Contributor      string // user id
	Created          time.Time
	Updated          time.Time
}

// Member is a user's membership of a project.
type Member struct {
	ProjectID string
	UserID    string
	Status    string
	Roles     []string // role identifiers, sorted
	Created   time.Time
	Updated   time.Time
}

// MemberUser is a membership together with the member's account.
type MemberUser struct {
	Member
	User User
}

// RoleAdmin is the identifier of the role that manages a project; the API's
// role table names the others.
const RoleAdmin = "adminRole"

// ProjectsVersion changes after every write of projects or memberships,
// which is every change to what ListUserProjects and CountUserProjects
// answer: a listing read after taking the version may be kept for as long as
// the version stays. This process is the only one that writes the store.
func (s *Store) ProjectsVersion() uint64 { return s.projects.Load() }

// projectsChanged moves ProjectsVersion on after a write of projects or
// memberships ended, committed or not.
func (s *Store) projectsChanged() { s.projects.Add(1) }

// CreateProject stores p and makes its author an enabled member with adminRole.
func (s *Store) CreateProject(ctx context.Context, p Project, adminRole string) error {
	defer s.projectsChanged()
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO projects(id, title, summary, template, guided_navigation, is_public,
			state, author, contributor, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.ID, p.Title, p.Summary, p.Template, p.GuidedNavigation, boolInt(p.IsPublic), p.State,
			p.Author, p.Contributor, p.Created.Unix(), p.Updated.Unix())
		if err != nil {
			return fmt.Errorf("create project: %w", err)
		}
		return putMember(ctx, tx, Member{ProjectID: p.ID, UserID: p.Author, Status: MemberEnabled,
			Roles: []string{adminRole}, Created: p.Created, Updated: p.Created})
	})
}

const projectColumns = `id, title, summary, template, guided_navigation, is_public, state, author, contributor, created, updated`

func scanProject(row scanner) (Project, error) {
	var p Project
	var created, updated int64
	err := row.Scan(&p.ID, &p.Title, &p.Summary, &p.Template, &p.GuidedNavigation, &p.IsPublic, &p.State,
		&p.Author, &p.Contributor, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Project{}, ErrNotFound
	}
	if err != nil {
		return Project{}, fmt.Errorf("scan project: %w", err)
	}
	p.Created, p.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	return p, nil
}

// ProjectByID returns the project, in any state.
func (s *Store) ProjectByID(ctx context.Context, id string) (Project, error) {
	return scanProject(s.r.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
}

// userProjectsWhere selects the projects a user is an enabled member of.
// Every write of projects or project_members calls projectsChanged.
const userProjectsWhere = ` FROM projects p JOIN project_members m ON m.project_id = p.id
	WHERE m.user_id = ? AND m.status = 'ENABLED' AND p.state <> 'DELETED'`

// ListUserProjects returns a page of the projects the user is an enabled
// member of (deleted projects left out), oldest first. A negative limit
// returns them all.
func (s *Store) ListUserProjects(ctx context.Context, userID string, offset, limit int) ([]Project, error) {
	rows, err := s.userProjects.QueryContext(ctx, userID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	var out []Project
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CountUserProjects counts what ListUserProjects lists.
func (s *Store) CountUserProjects(ctx context.Context, userID string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*)`+userProjectsWhere, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count projects: %w", err)
	}
	return n, nil
}

// DeleteProject marks the project DELETED.
func (s *Store) DeleteProject(ctx context.Context, id, by string, now time.Time) error {
	defer s.projectsChanged()
	res, err := s.w.ExecContext(ctx, `UPDATE projects SET state = 'DELETED', contributor = ?, updated = ?
		WHERE id = ? AND state <> 'DELETED'`, by, now.Unix(), id)
	if err != nil {
		return fmt.Errorf("delete project: %w", err)
	}
	return affected(res)
}

// Membership returns the user's membership of the project.
func (s *Store) Membership(ctx context.Context, projectID, userID string) (Member, error) {
	m := Member{ProjectID: projectID, UserID: userID}
	var created, updated int64
	var roles sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT m.status, m.created, m.updated,
		(SELECT group_concat(role, ' ') FROM (SELECT role FROM member_roles r
			WHERE r.project_id = m.project_id AND r.user_id = m.user_id ORDER BY role))
		FROM project_members m WHERE m.project_id = ? AND m.user_id = ?`, projectID, userID).
		Scan(&m.Status, &created, &updated, &roles)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, ErrNotFound
	}
	if err != nil {
		return Member{}, fmt.Errorf("membership: %w", err)
	}
	m.Created, m.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	m.Roles = strings.Fields(roles.String)
	return m, nil
}

// Members lists the project's members with their accounts, oldest first.
func (s *Store) Members(ctx context.Context, projectID string) ([]MemberUser, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m.status, m.created, m.updated,
		(SELECT group_concat(role, ' ') FROM (SELECT role FROM member_roles r
			WHERE r.project_id = m.project_id AND r.user_id = m.user_id ORDER BY role)),
		u.`+strings.ReplaceAll(userColumns, ", ", ", u.")+`
		FROM project_members m JOIN users u ON u.id = m.user_id
		WHERE m.project_id = ? AND u.is_service = 0 ORDER BY m.created, u.rowid`, projectID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	defer rows.Close()
	var out []MemberUser
	for rows.Next() {
		var mu MemberUser
		var created, updated, uc, uu int64
		var roles sql.NullString
		u := &mu.User
		if err := rows.Scan(&mu.Status, &created, &updated, &roles, &u.ID, &u.Domain, &u.Login, &u.PasswordHash,
			&u.FirstName, &u.LastName, &u.Timezone, &u.Country, &u.PhoneNumber, &u.SSOProvider,
			&u.IsDomainAdmin, &u.IsService, &uc, &uu); err != nil {
			return nil, fmt.Errorf("scan member: %w", err)
		}
		mu.ProjectID, mu.UserID = projectID, u.ID
		mu.Created, mu.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
		u.Created, u.Updated = time.Unix(uc, 0).UTC(), time.Unix(uu, 0).UTC()
		mu.Roles = strings.Fields(roles.String)
		out = append(out, mu)
	}
	return out, rows.Err()
}

// MemberChange is one requested change of a project membership.
type MemberChange struct {
	UserID string
	Status string   // MemberEnabled or MemberDisabled
	Roles  []string // replaces the roles when not nil
	Add    bool     // the user may be added; otherwise they must already be a member
}

// Member change outcomes.
var (
	ErrNotMember    = errors.New("user is not a member of the project")
	ErrNoRoles      = errors.New("a new member needs at least one role")
	ErrUserNotFound = errors.New("user does not exist")
)

// ApplyMemberChanges applies each change in its own savepoint inside one
// transaction and returns one error (or nil) per change. A change that would
// leave the project without an enabled admin fails with ErrLastAdmin.
func (s *Store) ApplyMemberChanges(ctx context.Context, projectID, adminRole string, changes []MemberChange, now time.Time) ([]error, error) {
	defer s.projectsChanged()
	results := make([]error, len(changes))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for i, c := range changes {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT member_change`); err != nil {
				return err
			}
			results[i] = applyMemberChange(ctx, tx, projectID, adminRole, c, now)
			if results[i] != nil && !isMemberFailure(results[i]) {
				return results[i]
			}
			stmt := `RELEASE member_change`
			if results[i] != nil {
				stmt = `ROLLBACK TO member_change; RELEASE member_change`
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	return results, err
}

func isMemberFailure(err error) bool {
	return errors.Is(err, ErrUserNotFound) || errors.Is(err, ErrNotMember) || errors.Is(err, ErrNoRoles) || errors.Is(err, ErrLastAdmin)
}

func applyMemberChange(ctx context.Context, tx *sql.Tx, projectID, adminRole string, c MemberChange, now time.Time) error {
	var isService bool
	err := tx.QueryRowContext(ctx, `SELECT is_service FROM users WHERE id = ?`, c.UserID).Scan(&isService)
	if errors.Is(err, sql.ErrNoRows) || isService {
		return ErrUserNotFound
	}
	if err != nil {
		return err
	}
	m := Member{ProjectID: projectID, UserID: c.UserID, Status: c.Status, Roles: c.Roles, Created: now, Updated: now}
	var created int64
	err = tx.QueryRowContext(ctx, `SELECT created FROM project_members WHERE project_id = ? AND user_id = ?`,
		projectID, c.UserID).Scan(&created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if !c.Add {
			return ErrNotMember
		}
		if len(c.Roles) == 0 {
			return ErrNoRoles
		}
	case err != nil:
		return err
	default:
		m.Created = time.Unix(created, 0).UTC()
	}
	if err := putMember(ctx, tx, m); err != nil {
		return err
	}
	var admins int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM project_members m JOIN member_roles r
		ON r.project_id = m.project_id AND r.user_id = m.user_id
		WHERE m.project_id = ? AND m.status = 'ENABLED' AND r.role = ?`, projectID, adminRole).Scan(&admins); err != nil {
		return err
	}
	if admins == 0 {
		return ErrLastAdmin
	}
	return nil
}

// putMember inserts or updates a membership; Roles, when not nil, replace the old ones.
func putMember(ctx context.Context, tx *sql.Tx, m Member) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO project_members(project_id, user_id, status, created, updated)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, user_id) DO UPDATE SET status = excluded.status, updated = excluded.updated`,
		m.ProjectID, m.UserID, m.Status, m.Created.Unix(), m.Updated.Unix())
	if err != nil {
		return fmt.Errorf("put member: %w", err)
	}
	if m.Roles == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM member_roles WHERE project_id = ? AND user_id = ?`, m.ProjectID, m.UserID); err != nil {
		return fmt.Errorf("put member roles: %w", err)
	}
	for _, r := range m.Roles {
		if _, err := tx.ExecContext(ctx, `INSERT INTO member_roles(project_id, user_id, role) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, m.ProjectID, m.UserID, r); err != nil {
			return fmt.Errorf("put member roles: %w", err)
		}
	}
	return nil
}
