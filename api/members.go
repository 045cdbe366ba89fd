package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// roleKind is the kind of caller a level of roles makes.
func roleKind(l notify.Level) callerKind {
	switch l {
	case notify.LevelManage:
		return kindProjectAdmin
	case notify.LevelEdit:
		return kindEditor
	case notify.LevelView:
		return kindViewer
	}
	return kindOther
}

func roleURI(pid, rid string) string { return wire.RoleURI(pid, rid) }

func roleURIs(pid string, identifiers []string) []string {
	uris := make([]string, 0, len(identifiers))
	for _, id := range identifiers {
		if r, ok := notify.RoleByIdentifier(id); ok {
			uris = append(uris, roleURI(pid, r.ID))
		}
	}
	return uris
}

func (s *Server) listRoles(w http.ResponseWriter, r *http.Request, c *caller) error {
	roles := notify.Roles()
	uris := make([]string, 0, len(roles))
	for _, ro := range roles {
		uris = append(uris, roleURI(c.project.ID, ro.ID))
	}
	respond(w, r, http.StatusOK, map[string]any{"projectRoles": map[string]any{"roles": uris}})
	return nil
}

func (s *Server) getRole(w http.ResponseWriter, r *http.Request, c *caller) error {
	ro, ok := notify.RoleByID(r.PathValue("rid"))
	if !ok {
		return notFound("projects", "Role %s not found", r.PathValue("rid"))
	}
	respond(w, r, http.StatusOK, roleJSON(c.project, ro))
	return nil
}

// roleJSON is a role as the platform showed it: its permissions, its meta and the links
// to itself and to its members (the platform's Ruby SDK of 0.6 reads its URI from them).
func roleJSON(p store.Project, ro notify.Role) map[string]any {
	perms := make(map[string]string, len(ro.Permissions))
	for _, perm := range ro.Permissions {
		perms[perm] = "1"
	}
	created, uri := timestamp(p.Created), roleURI(p.ID, ro.ID)
	return map[string]any{"projectRole": map[string]any{
		"permissions": perms,
		"links":       map[string]string{"self": uri, "roleUsers": uri + "/users"},
		"meta": map[string]string{"identifier": ro.Identifier, "title": ro.Title, "summary": ro.Summary,
			"created": created, "updated": created, "uri": uri},
	}}
}

// internalRoles answers the platform's other listing of roles, which holds the roles
// themselves rather than their URIs (the Ruby SDK reads roles from it).
func (s *Server) internalRoles(w http.ResponseWriter, r *http.Request, c *caller) error {
	list := make([]map[string]any, 0, len(notify.Roles()))
	for _, ro := range notify.Roles() {
		list = append(list, roleJSON(c.project, ro))
	}
	respond(w, r, http.StatusOK, map[string]any{"internalProjectRoles": map[string]any{"roles": list}})
	return nil
}

// roleUsers answers the profile URIs of the members who have a role.
func (s *Server) roleUsers(w http.ResponseWriter, r *http.Request, c *caller) error {
	ro, ok := notify.RoleByID(r.PathValue("rid"))
	if !ok {
		return notFound("projects", "Role %s not found", r.PathValue("rid"))
	}
	members, err := s.store.Members(r.Context(), c.project.ID)
	if err != nil {
		return err
	}
	users := []string{}
	for _, m := range members {
		if slices.Contains(m.Roles, ro.Identifier) {
			users = append(users, profileURI(m.UserID))
		}
	}
	respond(w, r, http.StatusOK, map[string]any{"associatedUsers": map[string]any{"role": roleURI(c.project.ID, ro.ID), "users": users}})
	return nil
}

type userJSON struct {
	User userBody `json:"user"`
}

type userBody struct {
	Content userContent       `json:"content"`
	Links   map[string]string `json:"links"`
	Meta    map[string]string `json:"meta"`
}

type userContent struct {
	Status    string   `json:"status"`
	UserRoles []string `json:"userRoles"`
	Login     string   `json:"login"`
	Email     string   `json:"email"`
	FirstName string   `json:"firstname"`
	LastName  string   `json:"lastname"`
}

func (s *Server) listProjectUsers(w http.ResponseWriter, r *http.Request, c *caller) error {
	members, err := s.store.Members(r.Context(), c.project.ID)
	if err != nil {
		return err
	}
	users := make([]userJSON, 0, len(members))
	for _, m := range members {
		users = append(users, memberJSON(c.project.ID, m))
	}
	respond(w, r, http.StatusOK, map[string]any{"users": users})
	return nil
}

func memberJSON(pid string, m store.MemberUser) userJSON {
	return userJSON{User: userBody{
		Content: userContent{Status: m.Status, UserRoles: roleURIs(pid, m.Roles), Login: m.User.Login,
			Email: m.User.Login, FirstName: m.User.FirstName, LastName: m.User.LastName},
		Links: map[string]string{"self": profileURI(m.UserID), "roles": projectURI(pid) + "/users/" + m.UserID + "/roles"},
		Meta: map[string]string{"created": timestamp(m.Created), "updated": timestamp(m.Updated),
			"title": strings.TrimSpace(m.User.FirstName + " " + m.User.LastName)},
	}}
}

// getProjectUser answers one member as the listing shows it (the Java SDK reads a user
// it added from here).
func (s *Server) getProjectUser(w http.ResponseWriter, r *http.Request, c *caller) error {
	members, err := s.store.Members(r.Context(), c.project.ID)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.UserID == r.PathValue("uid") {
			respond(w, r, http.StatusOK, memberJSON(c.project.ID, m))
			return nil
		}
	}
	return notFound("projects", "User %s is not a member of the project", r.PathValue("uid"))
}

// member returns the membership of the path's user in the caller's project.
func (s *Server) member(r *http.Request, c *caller) (store.Member, error) {
	m, err := s.store.Membership(r.Context(), c.project.ID, r.PathValue("uid"))
	if errors.Is(err, store.ErrNotFound) {
		return m, notFound("projects", "User %s is not a member of the project", r.PathValue("uid"))
	}
	return m, err
}

func (s *Server) listUserRoles(w http.ResponseWriter, r *http.Request, c *caller) error {
	m, err := s.member(r, c)
	if err != nil {
		return err
	}
	respond(w, r, http.StatusOK, map[string]any{"associatedRoles": map[string]any{"roles": roleURIs(c.project.ID, m.Roles)}})
	return nil
}

// listUserPermissions answers what a member may do in the project: the union of
// the permissions of her roles.
func (s *Server) listUserPermissions(w http.ResponseWriter, r *http.Request, c *caller) error {
	m, err := s.member(r, c)
	if err != nil {
		return err
	}
	perms := map[string]string{}
	for _, p := range notify.Permissions(m.Roles) {
		perms[p] = "1"
	}
	respond(w, r, http.StatusOK, map[string]any{"associatedPermissions": map[string]any{"permissions": perms}})
	return nil
}

// userChange is one item of the project users request.
type userChange struct {
	Content *struct {
		Status    string    `json:"status"`
		UserRoles *[]string `json:"userRoles"`
	} `json:"content"`
	Links *struct {
		Self string `json:"self"`
	} `json:"links"`
}

type updateUsersRequest struct {
	User  *userChange `json:"user"`
	Users []struct {
		User *userChange `json:"user"`
	} `json:"users"`
}

// updateProjectUsers serves both forms of POST /svc/projects/<pid>/users: a
// `user` object adds a user with roles, a `users` array changes the status
// (and roles) of members. Malformed items fail the whole request with 400;
// items that are well-formed but cannot be applied are listed under `failed`.
func (s *Server) updateProjectUsers(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req updateUsersRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	var items []*userChange
	var paths []string
	add := false
	switch {
	case req.User != nil && req.Users != nil:
		return badRequest("api", "Give either %s or %s, not both", "user", "users")
	case req.User != nil:
		items, paths, add = []*userChange{req.User}, []string{"user"}, true
	case req.Users != nil:
		for i, it := range req.Users {
			items = append(items, it.User)
			paths = append(paths, fmt.Sprintf("users[%d].user", i))
		}
	default:
		return badField("user", "or users is required")
	}
	changes := make([]store.MemberChange, len(items))
	uris := make([]string, len(items))
	for i, it := range items {
		ch, err := parseUserChange(c.project.ID, paths[i], it, add)
		if err != nil {
			return err
		}
		// An item of the users array that gives roles may add a user too, as the
		// platform's SDKs add members through it.
		ch.Add = add || len(ch.Roles) > 0
		uris[i] = profileURI(ch.UserID)
		if ch.UserID, err = s.userByLoginURI(r, ch.UserID); err != nil {
			return err
		}
		changes[i] = ch
	}
	results, err := s.store.ApplyMemberChanges(r.Context(), c.project.ID, notify.RoleAdmin, changes, s.now())
	if err != nil {
		return err
	}
	successful, failed := []string{}, []map[string]string{}
	for i, res := range results {
		if res == nil {
			successful = append(successful, uris[i])
			continue
		}
		failed = append(failed, map[string]string{"user": uris[i], "message": memberFailure(res)})
	}
	respond(w, r, http.StatusOK, map[string]any{"projectUsersUpdateResult": map[string]any{
		"successful": successful, "failed": failed,
	}})
	return nil
}

// userByLoginURI resolves the last part of a profile URI that the platform's SDKs build
// from a login (/svc/account/profile/jane@example.com) to the user's id. Any other
// value, or a login that names nobody, is returned as it is: it fails as an unknown user.
func (s *Server) userByLoginURI(r *http.Request, uid string) (string, error) {
	if !strings.Contains(uid, "@") {
		return uid, nil
	}
	u, err := s.store.UserByLogin(r.Context(), uid)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return uid, nil
	case err != nil:
		return "", err
	case u.IsService:
		return uid, nil
	}
	return u.ID, nil
}

func parseUserChange(pid, path string, it *userChange, add bool) (store.MemberChange, error) {
	var ch store.MemberChange
	if it == nil {
		return ch, badField(path, "is required")
	}
	if it.Links == nil || it.Links.Self == "" {
		return ch, badField(path+".links.self", "is required")
	}
	uid, ok := strings.CutPrefix(it.Links.Self, "/svc/account/profile/")
	if !ok || uid == "" || strings.Contains(uid, "/") {
		return ch, badField(path+".links.self", "must be a profile URI /svc/account/profile/<user id>")
	}
	ch.UserID = uid
	if it.Content == nil {
		return ch, badField(path+".content", "is required")
	}
	switch it.Content.Status {
	case store.MemberEnabled, store.MemberDisabled:
		ch.Status = it.Content.Status
	case "":
		if !add {
			return ch, badField(path+".content.status", "is required")
		}
		ch.Status = store.MemberEnabled
	default:
		return ch, badField(path+".content.status", "must be ENABLED or DISABLED")
	}
	if it.Content.UserRoles != nil {
		ch.Roles = []string{}
		for j, uri := range *it.Content.UserRoles {
			rid, ok := strings.CutPrefix(uri, roleURI(pid, ""))
			ro, found := notify.RoleByID(rid)
			if !ok || !found {
				viewer, _ := notify.RoleByIdentifier(notify.RoleViewer)
				return ch, badField(fmt.Sprintf("%s.content.userRoles[%d]", path, j), "must be a role URI of this project, e.g. "+roleURI(pid, viewer.ID))
			}
			ch.Roles = append(ch.Roles, ro.Identifier)
		}
	}
	if add && len(ch.Roles) == 0 {
		return ch, badField(path+".content.userRoles", "must name at least one role")
	}
	return ch, nil
}

func memberFailure(err error) string {
	switch {
	case errors.Is(err, store.ErrUserNotFound):
		return "Cannot add user to project. User doesn't exist"
	case errors.Is(err, store.ErrNotMember):
		return "User is not a member of the project"
	case errors.Is(err, store.ErrNoRoles):
		return "A new member needs at least one role"
	case errors.Is(err, store.ErrLastAdmin):
		return "The project must keep at least one enabled admin"
	default:
		return "The user could not be updated"
	}
}
