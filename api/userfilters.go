package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/wire"
)

// Data permissions: user filters are metadata objects of category userFilter,
// which only a project's admins create, read, change, delete, list and assign;
// every execution of a user meets all the user filters assigned to them.

// userFilterRoutes registers the assignments of user filters.
func (s *Server) userFilterRoutes() {
	if s.analytics == nil {
		return
	}
	const md = "/svc/md/{pid}"
	s.route("GET "+md+"/userfilters", permProjectManage, s.listUserFilters)
	s.route("POST "+md+"/userfilters", permProjectManage, s.assignUserFilters)
}

// managesProject reports whether the caller administers the project (or the domain).
func managesProject(c *caller) bool { return policy[permProjectManage][c.kind] }

// userFilterDenied is the refusal of a user filter to a caller who does not
// administer the project.
func userFilterDenied() *Error {
	return forbidden("md", "Only an admin of the project may read or change %s objects: they are the data permissions of its users",
		analytics.CategoryUserFilter)
}

// guardObject refuses a caller who does not administer the project an
// object that is a user filter.
func (s *Server) guardObject(ctx context.Context, c *caller, id int64) error {
	if managesProject(c) {
		return nil
	}
	o, err := s.analytics.Object(ctx, c.project.ID, id)
	if err != nil {
		return mdError(err)
	}
	if o.Category == analytics.CategoryUserFilter {
		return userFilterDenied()
	}
	return nil
}

// withoutUserFilters drops the user filters from a listing for a caller who
// does not administer the project.
func withoutUserFilters(c *caller, list []analytics.Object) []analytics.Object {
	if managesProject(c) {
		return list
	}
	out := list[:0:0]
	for _, o := range list {
		if o.Category != analytics.CategoryUserFilter {
			out = append(out, o)
		}
	}
	return out
}

// callerSlice is the slice of the project's data the caller sees.
func (s *Server) callerSlice(r *http.Request, c *caller) (analytics.Slice, error) {
	return s.analytics.UserSlice(r.Context(), c.project.ID, c.UserID)
}

// maxAssignments bounds the items of one assignment request and the filters of one item.
const maxAssignments = 1000

type assignRequest struct {
	UserFilters *struct {
		Items []struct {
			User        string   `json:"user"`
			UserFilters []string `json:"userFilters"`
		} `json:"items"`
	} `json:"userFilters"`
}

// assignUserFilters serves POST /svc/md/<pid>/userfilters: each item replaces the
// user filters of one user (an empty list removes them). A malformed item fails the
// request with 400 naming it; an item that cannot be applied (an unknown user, an
// object that is no user filter of the project) is listed under failed, the others
// under successful.
func (s *Server) assignUserFilters(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req assignRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.UserFilters == nil || req.UserFilters.Items == nil {
		return badField("userFilters.items", "is required")
	}
	items := req.UserFilters.Items
	if len(items) > maxAssignments {
		return badField("userFilters.items", fmt.Sprintf("may hold at most %d users", maxAssignments))
	}
	users := make([]string, len(items))
	for i, it := range items {
		path := fmt.Sprintf("userFilters.items[%d]", i)
		uid, ok := strings.CutPrefix(it.User, "/svc/account/profile/")
		if !ok || uid == "" || strings.Contains(uid, "/") {
			return badField(path+".user", "must be a profile URI /svc/account/profile/<user id>")
		}
		if it.UserFilters == nil {
			return badField(path+".userFilters", "is required; an empty list removes the user's filters")
		}
		if len(it.UserFilters) > maxAssignments {
			return badField(path+".userFilters", fmt.Sprintf("may hold at most %d filters", maxAssignments))
		}
		for j, f := range it.UserFilters {
			if pid, _, ok := wire.ParseObjURI(f); !ok || pid != c.project.ID {
				return badField(fmt.Sprintf("%s.userFilters[%d]", path, j), "must be a user filter URI of this project, /svc/md/"+c.project.ID+"/obj/<id>")
			}
		}
		var err error
		if users[i], err = s.userByLoginURI(r, uid); err != nil {
			return err
		}
	}
	successful, failed := []string{}, []map[string]string{}
	for i, it := range items {
		err := s.analytics.Assign(r.Context(), c.project.ID, users[i], it.UserFilters)
		var (
			input   *analytics.InputError
			missing *analytics.NotFoundError
		)
		switch {
		case err == nil:
			successful = append(successful, it.User)
		case errors.As(err, &input):
			failed = append(failed, map[string]string{"user": it.User, "message": input.Msg})
		case errors.As(err, &missing):
			failed = append(failed, map[string]string{"user": it.User, "message": "User doesn't exist"})
		default:
			return mdError(err)
		}
	}
	respond(w, r, http.StatusOK, map[string]any{"userFiltersUpdateResult": map[string]any{
		"successful": successful, "failed": failed,
	}})
	return nil
}

// listUserFilters serves GET /svc/md/<pid>/userfilters?users=<profile uri>&userFilters=<uri>&offset&count:
// the users with user filters (of those users, holding one of those filters), each with
// all their filters, count at a time (default 100, at most 1000).
func (s *Server) listUserFilters(w http.ResponseWriter, r *http.Request, c *caller) error {
	q := r.URL.Query()
	offset, count := 0, 100
	for _, p := range []struct {
		name string
		to   *int
		min  int
	}{{"offset", &offset, 0}, {"count", &count, 1}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < p.min || n > 1_000_000 {
				return badRequest("api", "Query parameter %s must be a whole number from "+strconv.Itoa(p.min)+" to 1000000", p.name)
			}
			*p.to = n
		}
	}
	count = min(count, 1000)
	aq := analytics.AssignmentQuery{Offset: offset, Count: count, Filters: splitList(q["userFilters"])}
	users := splitList(q["users"])
	if len(users) > maxAssignments || len(aq.Filters) > maxAssignments {
		return badRequest("api", "Query parameters %s list at most 1000 values", "users, userFilters")
	}
	for _, u := range users {
		uid, ok := strings.CutPrefix(u, "/svc/account/profile/")
		if !ok || uid == "" || strings.Contains(uid, "/") {
			return badRequest("api", "Query parameter %s must list profile URIs /svc/account/profile/<user id>", "users")
		}
		uid, err := s.userByLoginURI(r, uid)
		if err != nil {
			return err
		}
		aq.Users = append(aq.Users, uid)
	}
	list, total, err := s.analytics.Assignments(r.Context(), c.project.ID, aq)
	if err != nil {
		return mdError(err)
	}
	items := make([]map[string]any, len(list))
	for i, a := range list {
		items[i] = map[string]any{"user": profileURI(a.User), "userFilters": a.Filters}
	}
	respond(w, r, http.StatusOK, map[string]any{"userFilters": map[string]any{
		"items": items, "length": total, "offset": offset, "count": len(items),
	}})
	return nil
}

// splitList reads a repeated or comma-separated query parameter.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				if u, err := url.PathUnescape(part); err == nil {
					part = u
				}
				out = append(out, part)
			}
		}
	}
	return out
}
