package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
)

// world is a project and one user of every kind of caller.
type world struct {
	b        *apptest.Bundle
	project  string
	callers  map[string]*client.Client
	browsers map[string]*browser
	profiles map[string]string
	seq      int
}

var callerKinds = []string{"domainAdmin", "projectAdmin", "editor", "viewer", "other"}

func newWorld(t *testing.T) *world {
	b := apptest.Start(t)
	w := &world{b: b, callers: map[string]*client.Client{"domainAdmin": b.Admin},
		profiles: map[string]string{"domainAdmin": b.AdminProfile}, browsers: map[string]*browser{}}
	w.browsers["domainAdmin"] = newBrowser(t, b.URL, "matrix")
	w.browsers["domainAdmin"].loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	for _, k := range callerKinds[1:] {
		w.callers[k], w.profiles[k] = b.NewUser(t, k+"@example.com")
		w.browsers[k] = newBrowser(t, b.URL, "matrix")
		w.browsers[k].loginWithToken(k+"@example.com", "S3cret-pass")
	}
	w.project = w.newProject(t)
	return w
}

// newProject creates a project whose admin is projectAdmin, with editor and viewer members.
func (w *world) newProject(t *testing.T) string {
	ctx := context.Background()
	p, err := w.callers["projectAdmin"].CreateProject(ctx, "World", "")
	if err != nil {
		t.Fatal(err)
	}
	for kind, role := range map[string]string{"editor": "editorRole", "viewer": "readOnlyUserRole"} {
		uri, err := w.callers["projectAdmin"].RoleURI(ctx, p, role)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := w.callers["projectAdmin"].AddProjectUser(ctx, p, w.profiles[kind], uri); err != nil || len(res.Failed) > 0 {
			t.Fatalf("add %s: %+v %v", kind, res, err)
		}
	}
	return p
}

func (w *world) newUser(t *testing.T) string {
	w.seq++
	uri, err := w.b.Admin.CreateUser(context.Background(), "default", client.NewUser{
		Login: fmt.Sprintf("target%d@example.com", w.seq), Password: "S3cret-pass", FirstName: "T", LastName: "U"})
	if err != nil {
		t.Fatal(err)
	}
	return uri
}

// TestAuthorizationMatrix calls every endpoint as each kind of caller.
func TestAuthorizationMatrix(t *testing.T) {
	gate.Parallel(t)
	w := newWorld(t)
	viewerProfile := w.profiles["viewer"]
	cases := []struct {
		name   string
		method string
		path   func(t *testing.T) string
		body   func() any
		want   [5]int // domainAdmin, projectAdmin, editor, viewer, other
	}{
		{"get project", "GET", w.fixed(w.project), nil, [5]int{200, 200, 200, 200, 404}},
		{"list project users", "GET", w.fixed(w.project + "/users"), nil, [5]int{200, 200, 200, 200, 404}},
		{"list roles", "GET", w.fixed(w.project + "/roles"), nil, [5]int{200, 200, 200, 200, 404}},
		{"get role", "GET", w.fixed(w.project + "/roles/2"), nil, [5]int{200, 200, 200, 200, 404}},
		{"member roles", "GET", func(*testing.T) string { return w.project + "/users/" + uid(viewerProfile) + "/roles" }, nil,
			[5]int{200, 200, 200, 200, 404}},
		{"change members", "POST", w.fixed(w.project + "/users"), func() any {
			return map[string]any{"users": []any{map[string]any{"user": map[string]any{
				"content": map[string]any{"status": "ENABLED"}, "links": map[string]any{"self": viewerProfile}}}}}
		}, [5]int{200, 200, 403, 403, 404}},
		{"delete project", "DELETE", w.newProject, nil, [5]int{204, 204, 403, 403, 404}},
		{"create project", "POST", w.fixed("/svc/projects/"), func() any {
			return map[string]any{"project": map[string]any{"meta": map[string]any{"title": "X"}}}
		}, [5]int{201, 201, 201, 201, 201}},
		{"list domain users", "GET", w.fixed("/svc/account/domains/default/users"), nil, [5]int{200, 403, 403, 403, 403}},
		{"create domain user", "POST", w.fixed("/svc/account/domains/default/users"), func() any {
			w.seq++
			return map[string]any{"accountSetting": map[string]any{"login": fmt.Sprintf("new%d@example.com", w.seq),
				"password": "S3cret-pass", "verifyPassword": "S3cret-pass", "firstName": "N", "lastName": "U"}}
		}, [5]int{201, 403, 403, 403, 403}},
		{"viewer's profile", "GET", w.fixed(viewerProfile), nil, [5]int{200, 404, 404, 200, 404}},
		{"viewer's projects", "GET", w.fixed(viewerProfile + "/projects"), nil, [5]int{200, 404, 404, 200, 404}},
		{"delete a user", "DELETE", w.newUser, nil, [5]int{200, 404, 404, 404, 404}},
		{"current profile", "GET", w.fixed("/svc/account/profile/current"), nil, [5]int{307, 307, 307, 307, 307}},
		{"unknown project", "GET", w.fixed("/svc/projects/doesnotexist"), nil, [5]int{404, 404, 404, 404, 404}},
		{"unknown domain", "GET", w.fixed("/svc/account/domains/nope/users"), nil, [5]int{404, 404, 404, 404, 404}},
	}
	for _, tc := range cases {
		for i, kind := range callerKinds {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				body := ""
				if tc.body != nil {
					data, _ := json.Marshal(tc.body())
					body = string(data)
				}
				r := w.browsers[kind].do(tc.method, tc.path(t), body)
				if r.status != tc.want[i] {
					t.Errorf("%s %s as %s: status %d, want %d; %s", tc.method, tc.name, kind, r.status, tc.want[i], r.body)
				}
			})
		}
	}
}

func (w *world) fixed(path string) func(*testing.T) string {
	return func(*testing.T) string { return path }
}

func uid(profileURI string) string { return profileURI[len("/svc/account/profile/"):] }
