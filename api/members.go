package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
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

func roleURI(pid, rid string) string { return projectURI(pid) + "/roles/" + rid }

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
	perms := make(map[string]string, len(ro.Permissions))
	for _, p := range ro.Permissions {
		perms[p] = "1"
	}
	created := timestamp(c.project.Created)
	respond(w, r, http.StatusOK, map[string]any{"projectRole": map[string]any{
		"permissions": perms,
		"meta": map[string]string{"identifier": ro.Identifier, "title": ro.Title, "summary": ro.Summary,
			"created": created, "updated": created, "uri": roleURI(c.project.ID, ro.ID)},
	}})
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
		users = append(users, userJSON{User: userBody{
			Content: userContent{Status: m.Status, UserRoles: roleURIs(c.project.ID, m.Roles), Login: m.User.Login,
				Email: m.User.Login, FirstName: m.User.FirstName, LastName: m.User.LastName},
			Links: map[string]string{"self": profileURI(m.UserID), "roles": projectURI(c.project.ID) + "/users/" + m.UserID + "/roles"},
			Meta: map[string]string{"created": timestamp(m.Created), "updated": timestamp(m.Updated),
				"title": strings.TrimSpace(m.User.FirstName + " " + m.User.LastName)},
		}})
	}
	respond(w, r, http.StatusOK, map[string]any{"users": users})
	return nil
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
		ch.Add = add
		changes[i], uris[i] = ch, profileURI(ch.UserID)
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
