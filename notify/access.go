package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/store"
)

// Permissions a role grants, by the platform's names.
const (
	PermManageProject       = "canManageProject"
	PermInviteUserToProject = "canInviteUserToProject"
	PermManageMetric        = "canManageMetric"
	PermManageReport        = "canManageReport"
	PermManageReportDef     = "canManageReportDefinition"
	PermManageLDM           = "canManageLDM"
	PermExecute             = "canExecute"
	PermExportReport        = "canExportReport"
	PermSeeOtherUserDetails = "canSeeOtherUserDetails"
	PermCreateSubscription  = "canCreateSubscription"
)

// Identifiers of the project roles.
const (
	RoleAdmin     = store.RoleAdmin
	RoleEditor    = "editorRole"
	RoleViewer    = "readOnlyUserRole"
	RoleDashboard = "dashboardOnlyRole"
	RoleExplorer  = "explorerRole"
)

// Level is how far a member's roles reach in a project, the widest first.
// The API's policy of routes is written in levels.
type Level int

// The levels, the widest first.
const (
	LevelManage Level = iota // the admin role: the project, its members and its data
	LevelEdit                // the editor role: the model, metrics and reports
	LevelView                // the read-only roles
	LevelNone                // no role, or not an enabled member
)

// Role is one of the project roles every project has. Role ids are the same
// in every project; clients look roles up by identifier.
type Role struct {
	ID, Identifier, Title, Summary string
	Level                          Level
	Permissions                    []string
}

var roles = []Role{
	{"2", RoleAdmin, "Admin", "Manages the project, its members and its data", LevelManage,
		[]string{PermManageProject, PermInviteUserToProject, PermManageMetric, PermManageReport, PermManageReportDef,
			PermManageLDM, PermExecute, PermExportReport, PermSeeOtherUserDetails, PermCreateSubscription}},
	{"5", RoleEditor, "Editor", "Changes the data model, metrics and reports", LevelEdit,
		[]string{PermManageMetric, PermManageReport, PermManageReportDef, PermManageLDM, PermExecute,
			PermExportReport, PermSeeOtherUserDetails, PermCreateSubscription}},
	{"3", RoleViewer, "Viewer", "Reads and executes reports", LevelView,
		[]string{PermExecute, PermExportReport, PermSeeOtherUserDetails, PermCreateSubscription}},
	{"4", RoleDashboard, "Embedded Dashboard Only", "Sees dashboards", LevelView,
		[]string{PermExecute}},
	{"6", RoleExplorer, "Explorer", "Explores data without changing it", LevelView,
		[]string{PermExecute, PermExportReport, PermSeeOtherUserDetails, PermCreateSubscription}},
}

// Roles lists the project roles.
func Roles() []Role { return slices.Clone(roles) }

// RoleByID returns the role with the id.
func RoleByID(id string) (Role, bool) {
	i := slices.IndexFunc(roles, func(r Role) bool { return r.ID == id })
	if i < 0 {
		return Role{}, false
	}
	return roles[i], true
}

// RoleByIdentifier returns the role with the identifier.
func RoleByIdentifier(identifier string) (Role, bool) {
	i := slices.IndexFunc(roles, func(r Role) bool { return r.Identifier == identifier })
	if i < 0 {
		return Role{}, false
	}
	return roles[i], true
}

// Permissions is the union of the permissions of the roles, sorted.
func Permissions(identifiers []string) []string {
	var out []string
	for _, id := range identifiers {
		if r, ok := RoleByIdentifier(id); ok {
			out = append(out, r.Permissions...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Standing is what a user may do in a project: the decision behind the API's
// answers to its callers and behind every run of the engine as a
// subscription's owner. Access reads it; Decide applies it.
type Standing struct {
	ProjectID string
	UserID    string
	// DomainAdmin is set for an admin of the service's domain, who may do
	// everything in its projects.
	DomainAdmin bool
	// Member is set for an enabled member of the project.
	Member bool
	// Level is how far the member's roles reach; LevelNone for a user who is
	// not an enabled member.
	Level Level
	// perms are the permissions of the member's roles, sorted.
	perms []string
}

// May reports whether the standing grants the permission: a domain admin's
// grants every one, a member's those of their roles.
func (s Standing) May(perm string) bool {
	_, ok := slices.BinarySearch(s.perms, perm)
	return s.DomainAdmin || ok
}

// Access reads what the decision needs: standings and objects.
type Access struct {
	st     *store.Store
	domain string
}

// NewAccess returns the access rules over st for the service's domain, whose
// admins may do everything in its projects.
func NewAccess(st *store.Store, domain string) *Access { return &Access{st: st, domain: domain} }

// Standing returns the standing of user in the project. domainAdmin says
// whether the user administers the service's domain, as the API knows of its
// caller; UserStanding reads it.
func (a *Access) Standing(ctx context.Context, projectID, userID string, domainAdmin bool) (Standing, error) {
	m, err := a.st.Membership(ctx, projectID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return Standing{ProjectID: projectID, UserID: userID, DomainAdmin: domainAdmin, Level: LevelNone}, nil
	}
	if err != nil {
		return Standing{ProjectID: projectID, UserID: userID, DomainAdmin: domainAdmin, Level: LevelNone}, err
	}
	return standingOf(m, domainAdmin), nil
}

// standingOf is the standing a membership gives, domainAdmin saying whether
// its user administers the service's domain.
func standingOf(m store.Member, domainAdmin bool) Standing {
	s := Standing{ProjectID: m.ProjectID, UserID: m.UserID, DomainAdmin: domainAdmin, Level: LevelNone}
	if m.Status != store.MemberEnabled {
		return s
	}
	s.Member = true
	for _, id := range m.Roles {
		if r, ok := RoleByIdentifier(id); ok {
			s.Level = min(s.Level, r.Level)
		}
	}
	s.perms = Permissions(m.Roles)
	return s
}

// UserStanding returns the standing of user in the project, reading whether
// the user administers the service's domain. A user who no longer exists has
// the standing of a stranger.
func (a *Access) UserStanding(ctx context.Context, projectID, userID string) (Standing, error) {
	u, err := a.st.UserByID(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return Standing{ProjectID: projectID, UserID: userID, Level: LevelNone}, nil
	}
	if err != nil {
		return Standing{}, err
	}
	return a.Standing(ctx, projectID, userID, u.IsDomainAdmin && u.Domain == a.domain)
}

// Object is a metadata object as the decision sees it.
type Object struct {
	URI      string
	Found    bool   // the project has an object at URI
	Category string // its category, when found
}

// Object looks up the object that uri names in the project. An URI that is
// not an object URI of the project, or names no object, is not found.
func (a *Access) Object(ctx context.Context, projectID, uri string) (Object, error) {
	o := Object{URI: uri}
	id, ok := objectIDIn(projectID, uri)
	if !ok {
		return o, nil
	}
	obj, err := a.st.ObjectByID(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return o, nil
	}
	if err != nil {
		return o, err
	}
	o.Found, o.Category = true, obj.Category
	return o, nil
}

// Objects looks up each object of needs, by URI.
func (a *Access) Objects(ctx context.Context, projectID string, needs Needs) (map[string]Object, error) {
	out := make(map[string]Object, len(needs.Objects))
	for _, n := range needs.Objects {
		if _, ok := out[n.URI]; ok {
			continue
		}
		o, err := a.Object(ctx, projectID, n.URI)
		if err != nil {
			return nil, err
		}
		out[n.URI] = o
	}
	return out, nil
}

// objectIDIn returns the id of an object URI of the project.
func objectIDIn(projectID, uri string) (int64, bool) {
	s, ok := objectIn(projectID, uri)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// Needs is what an execution asks of its principal.
type Needs struct {
	// Member asks for an enabled member of the project, as the owner of a
	// subscription must be: administering the domain is not enough.
	Member bool
	// Execute asks for canExecute: the execution computes metrics or reports.
	Execute bool
	// Export asks for canExportReport: it renders reports into files.
	Export bool
	// Objects are the objects it names, each of which the principal must be
	// able to read.
	Objects []Named
}

// Named is an object an execution names.
type Named struct {
	URI string
	// Categories are what it must be, e.g. report and reportDefinition.
	Categories []string
	// Noun is what people call it: "metric", "report".
	Noun string
	// Field is where a request names it, for an answer that names the field.
	Field string
}

// The categories Metric and Report take, shared: a burst names thousands.
var (
	metricCategories = []string{"metric"}
	reportCategories = []string{"report", "reportDefinition"}
)

// Metric names the metric at uri, named in field.
func Metric(uri, field string) Named {
	return Named{URI: uri, Categories: metricCategories, Noun: "metric", Field: field}
}

// Report names the report or report definition at uri, named in field.
func Report(uri, field string) Named {
	return Named{URI: uri, Categories: reportCategories, Noun: "report", Field: field}
}

// Refusal codes: why a principal may not run an execution.
const (
	NotMember     = "notMember"
	MayNotExecute = "mayNotExecute"
	MayNotExport  = "mayNotExport"
	Unreadable    = "unreadable"
)

// Refusal is why a principal may not run an execution.
type Refusal struct {
	Code string
	// Object is the object refused (Unreadable), as Decide found it.
	Object Object
	Named  Named
}

// Reason says why, calling the principal who (such as "owner"):
// "owner is not a member of the project", "owner may not execute reports",
// "report 12 is not readable by the owner".
func (r *Refusal) Reason(who string) string {
	switch r.Code {
	case NotMember:
		return who + " is not a member of the project"
	case MayNotExecute:
		return who + " may not execute reports"
	case MayNotExport:
		return who + " may not export reports"
	}
	id := r.Named.URI
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return fmt.Sprintf("%s %s is not readable by the %s", r.Named.Noun, id, who)
}

// Error is the reason, with the principal called "owner".
func (r *Refusal) Error() string { return r.Reason("owner") }

// Decide is the one authorization decision of an execution, which the API
// applies to its callers and the engine to a subscription's owner at every
// fire, before any execution: whether a principal of standing s may run an
// execution that needs n, whose objects Access.Objects looked up. It checks
// the membership, then the permissions, then each object in order, and
// returns the first refusal, or nil.
//
// An object is readable when the project has it, it is of a category the
// execution takes, and the principal may see the project's metadata (a role,
// or the domain's administration).
func Decide(s Standing, n Needs, objects map[string]Object) *Refusal {
	switch {
	case n.Member && !s.Member, !s.Member && !s.DomainAdmin:
		return &Refusal{Code: NotMember}
	case n.Execute && !s.May(PermExecute):
		return &Refusal{Code: MayNotExecute}
	case n.Export && !s.May(PermExportReport):
		return &Refusal{Code: MayNotExport}
	}
	sees := s.DomainAdmin || s.Level <= LevelView
	for _, named := range n.Objects {
		o := objects[named.URI]
		if !sees || !o.Found || !slices.Contains(named.Categories, o.Category) {
			return &Refusal{Code: Unreadable, Object: o, Named: named}
		}
	}
	return nil
}
