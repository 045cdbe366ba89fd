package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// permission is what a route needs of its caller.
type permission int

const (
	permAuthenticated     permission = iota // any logged-in user
	permSelf                                // the profile {uid} is the caller's own
	permDomainAdmin                         // administers the domain {domain}
	permProjectRecord                       // reads the project {pid} record, even once deleted
	permProjectView                         // reads inside the project {pid}
	permProjectEdit                         // changes the model and metadata of {pid}
	permProjectManage                       // manages {pid}: its members, its deletion
	permSubscriber                          // reads, previews or deletes the subscriptions of member {uid} in {pid}
	permSubscriptionWrite                   // creates or changes them: they send through {uid}'s own channels
)

// callerKind is the caller's relation to the resource a route names.
type callerKind int

const (
	kindDomainAdmin  callerKind = iota // admin of the domain: may do everything in it
	kindSelf                           // the user the profile route names
	kindProjectAdmin                   // enabled member with adminRole
	kindEditor                         // enabled member with editorRole
	kindViewer                         // enabled member with a read-only role
	kindOther                          // none of the above
	numKinds
)

// policy is who may do what: one row per permission, one column per kind of
// caller. Every route names one permission; guard applies this table.
var policy = map[permission][numKinds]bool{
	//                  domainAdmin self   projAdmin editor viewer other
	permAuthenticated:     {true, true, true, true, true, true},
	permSelf:              {true, true, false, false, false, false},
	permDomainAdmin:       {true, false, false, false, false, false},
	permProjectRecord:     {true, false, true, true, true, false},
	permProjectView:       {true, false, true, true, true, false},
	permProjectEdit:       {true, false, true, true, false, false},
	permProjectManage:     {true, false, true, false, false, false},
	permSubscriber:        {true, true, true, false, false, false},
	permSubscriptionWrite: {true, true, false, false, false, false},
}

// caller is the authenticated principal of a request and what guard resolved.
type caller struct {
	store.Principal
	kind     callerKind
	project  store.Project   // set on project routes
	standing notify.Standing // in project, set on project routes
}

// guard authenticates the request by its temporary token, resolves the
// caller's relation to the route's resource and applies the policy. Callers
// with no relation to a project or profile get 404, so they learn nothing of it.
func (s *Server) guard(perm permission, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		c := &caller{Principal: p}
		if err := s.resolve(r, perm, c); err != nil {
			s.writeError(w, r, err)
			return
		}
		if !policy[perm][c.kind] {
			s.writeError(w, r, denied(perm, c.kind, r))
			return
		}
		if err := h(w, r, c); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func denied(perm permission, kind callerKind, r *http.Request) *Error {
	switch {
	case perm == permSubscriptionWrite && kind == kindProjectAdmin:
		return forbidden("subscriptions", "Only user %s or a domain admin may create or change the user's subscriptions: they send through the user's own channels",
			r.PathValue("uid"))
	case (perm == permSubscriber || perm == permSubscriptionWrite) && kind != kindOther:
		return notFound("subscriptions", "Subscriptions of user %s not found", r.PathValue("uid"))
	case kind == kindOther && perm == permSelf:
		return notFound("account", "User %s not found", r.PathValue("uid"))
	case kind == kindOther && perm >= permProjectRecord:
		return notFound("projects", "Project %s not found", r.PathValue("pid"))
	case perm == permDomainAdmin:
		return forbidden("account", "Can be accessed only by domain admin")
	default:
		return forbidden("api", "You are not allowed to do this: it needs %s", permName(perm))
	}
}

func permName(p permission) string {
	switch p {
	case permProjectEdit:
		return "an editor or admin of the project"
	case permProjectManage:
		return "an admin of the project"
	default:
		return "other rights"
	}
}

// resolve sets c.kind (and c.project) for the route's resource.
func (s *Server) resolve(r *http.Request, perm permission, c *caller) error {
	ctx := r.Context()
	admin := c.IsDomainAdmin && c.Domain == s.domain
	switch perm {
	case permAuthenticated:
		c.kind = kindOther
	case permSelf:
		c.kind = kindOther
		if r.PathValue("uid") == c.UserID {
			c.kind = kindSelf
		}
	case permDomainAdmin:
		ok, err := s.store.DomainExists(ctx, r.PathValue("domain"))
		if err != nil {
			return err
		}
		if !ok {
			return notFound("account", "Domain %s not found", r.PathValue("domain"))
		}
		c.kind = kindOther
		admin = c.IsDomainAdmin && c.Domain == r.PathValue("domain")
	default:
		var err error
		if c.project, c.standing, c.kind, err = s.projectCaller(r, c, r.PathValue("pid"), perm); err != nil {
			return err
		}
		if (perm == permSubscriber || perm == permSubscriptionWrite) && c.kind != kindOther && r.PathValue("uid") == c.UserID {
			c.kind = kindSelf
		}
	}
	if admin {
		c.kind = kindDomainAdmin
	}
	return nil
}

// projectCaller loads project pid for a route that needs perm (404 when it
// does not exist, or is deleted and perm is not permProjectRecord), the
// caller's standing in it, the decision the engine takes for a
// subscription's owner too, and the kind of caller that standing makes.
func (s *Server) projectCaller(r *http.Request, c *caller, pid string, perm permission) (store.Project, notify.Standing, callerKind, error) {
	p, err := s.store.ProjectByID(r.Context(), pid)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.State == store.ProjectDeleted && perm != permProjectRecord) {
		return p, notify.Standing{}, kindOther, notFound("projects", "Project %s not found", pid)
	}
	if err != nil {
		return p, notify.Standing{}, kindOther, err
	}
	admin := c.IsDomainAdmin && c.Domain == s.domain
	st, err := s.notify.Access().Standing(r.Context(), pid, c.UserID, admin)
	if err != nil {
		return p, st, kindOther, err
	}
	if admin {
		return p, st, kindDomainAdmin, nil
	}
	return p, st, roleKind(st.Level), nil
}

// authorizeProject applies the policy for a project that the request's body
// names rather than its path (executions, exports), and then the decision
// for an execution that needs what needs asks. A refusal of an object in
// needs is 400 naming its field when it is of another category; one the
// project does not have is left to the execution, which answers 404 or 400
// as the URI deserves.
func (s *Server) authorizeProject(r *http.Request, c *caller, pid string, perm permission, needs notify.Needs) error {
	_, st, kind, err := s.projectCaller(r, c, pid, perm)
	switch {
	case err != nil:
		return err
	case kind == kindOther && !policy[perm][kind]:
		return notFound("projects", "Project %s not found", pid)
	case !policy[perm][kind]:
		return forbidden("api", "You are not allowed to do this: it needs %s", permName(perm))
	}
	objects, err := s.notify.Access().Objects(r.Context(), pid, needs)
	if err != nil {
		return err
	}
	refusal := notify.Decide(st, needs, objects)
	if refusal == nil {
		return nil
	}
	switch refusal.Code {
	case notify.MayNotExecute:
		return forbidden("api", "You are not allowed to do this: it needs %s", notify.PermExecute)
	case notify.MayNotExport:
		return forbidden("api", "You are not allowed to do this: it needs %s", notify.PermExportReport)
	case notify.Unreadable:
		o := refusal.Object
		if !o.Found {
			return nil
		}
		return badField(refusal.Named.Field, fmt.Sprintf("%s is a %s, not a %s", o.URI, o.Category, strings.Join(refusal.Named.Categories, " or ")))
	}
	return notFound("projects", "Project %s not found", pid)
}
