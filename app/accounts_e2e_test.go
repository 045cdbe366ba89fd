package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
)

// TestAccountAndProjectWalk goes the way a person does: log in, create a
// user, create a project, add the user, disable them, list.
func TestAccountAndProjectWalk(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	ctx := context.Background()
	jane, janeURI := b.NewUser(t, "jane@example.com")

	projectURI, err := b.Admin.CreateProject(ctx, "Sales", "Monthly sales")
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Admin.Project(ctx, projectURI)
	if err != nil {
		t.Fatal(err)
	}
	if p.Content.State != "ENABLED" || p.Meta.Title != "Sales" || p.Meta.Author != b.AdminProfile || p.Links["self"] != projectURI {
		t.Fatalf("project = %+v", p)
	}
	if _, err := jane.Project(ctx, projectURI); client.StatusOf(err) != 404 {
		t.Fatalf("non-member GET project: %v, want 404", err)
	}

	editor, err := b.Admin.RoleURI(ctx, projectURI, "editorRole")
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Admin.AddProjectUser(ctx, projectURI, janeURI, editor)
	if err != nil || len(res.Successful) != 1 || res.Successful[0] != janeURI || len(res.Failed) != 0 {
		t.Fatalf("add user = %+v, %v", res, err)
	}
	list, err := jane.Projects(ctx, janeURI)
	if err != nil || len(list) != 1 || list[0].Links["self"] != projectURI {
		t.Fatalf("jane's projects = %+v, %v", list, err)
	}
	var users struct {
		Users []struct {
			User struct {
				Content struct {
					Status    string   `json:"status"`
					UserRoles []string `json:"userRoles"`
					Login     string   `json:"login"`
				} `json:"content"`
				Links map[string]string `json:"links"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := jane.Do(ctx, "GET", projectURI+"/users", nil, &users); err != nil {
		t.Fatal(err)
	}
	if len(users.Users) != 2 || users.Users[1].User.Content.Login != "jane@example.com" ||
		users.Users[1].User.Content.UserRoles[0] != editor || users.Users[1].User.Links["self"] != janeURI {
		t.Fatalf("project users = %+v", users)
	}

	res, err = b.Admin.SetProjectUserStatus(ctx, projectURI, false, janeURI)
	if err != nil || len(res.Successful) != 1 {
		t.Fatalf("disable = %+v, %v", res, err)
	}
	if list, err := jane.Projects(ctx, janeURI); err != nil || len(list) != 0 {
		t.Fatalf("disabled member's projects = %+v, %v", list, err)
	}
	if _, err := jane.Project(ctx, projectURI); client.StatusOf(err) != 404 {
		t.Fatalf("disabled member GET project: %v, want 404", err)
	}
	if res, err := b.Admin.SetProjectUserStatus(ctx, projectURI, true, janeURI); err != nil || len(res.Successful) != 1 {
		t.Fatalf("enable = %+v, %v", res, err)
	}
	if _, err := jane.Project(ctx, projectURI); err != nil {
		t.Fatalf("re-enabled member: %v", err)
	}

	// Deleting the project: 204, state DELETED, gone from listings.
	if err := b.Admin.Do(ctx, "DELETE", projectURI, nil, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := b.Admin.Project(ctx, projectURI); err != nil || p.Content.State != "DELETED" {
		t.Fatalf("deleted project = %+v, %v", p.Content, err)
	}
	if err := b.Admin.Do(ctx, "GET", projectURI+"/users", nil, nil); client.StatusOf(err) != 404 {
		t.Fatalf("users of a deleted project: %v, want 404", err)
	}
	if list, _ := jane.Projects(ctx, janeURI); len(list) != 0 {
		t.Fatalf("deleted project still listed: %+v", list)
	}
}

func TestProjectListingPagedForm(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	ctx := context.Background()
	for _, title := range []string{"A", "B", "C"} {
		if _, err := b.Admin.CreateProject(ctx, title, ""); err != nil {
			t.Fatal(err)
		}
	}
	var paged struct {
		Projects struct {
			Paging struct {
				Offset, Limit, Count, TotalCount int
				Next                             *string
			} `json:"paging"`
			Items []struct {
				Project client.Project `json:"project"`
			} `json:"items"`
		} `json:"projects"`
	}
	if err := b.Admin.Do(ctx, "GET", b.AdminProfile+"/projects?offset=0&limit=2", nil, &paged); err != nil {
		t.Fatal(err)
	}
	pg := paged.Projects.Paging
	if pg.Count != 2 || pg.TotalCount != 3 || pg.Limit != 2 || pg.Next == nil || len(paged.Projects.Items) != 2 {
		t.Fatalf("first page = %+v", paged.Projects)
	}
	if err := b.Admin.Do(ctx, "GET", *pg.Next, nil, &paged); err != nil {
		t.Fatal(err)
	}
	if pg := paged.Projects.Paging; pg.Count != 1 || pg.Offset != 2 || pg.Next != nil || paged.Projects.Items[0].Project.Meta.Title != "C" {
		t.Fatalf("second page = %+v", paged.Projects)
	}
	// Without offset/limit: the spec's unpaged form.
	list, err := b.Admin.Projects(ctx, b.AdminProfile)
	if err != nil || len(list) != 3 {
		t.Fatalf("unpaged = %d, %v", len(list), err)
	}
}

func TestDomainUsersListAndDelete(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	ctx := context.Background()
	jane, janeURI := b.NewUser(t, "jane@example.com")
	b.NewUser(t, "joe@example.com")
	var out struct {
		AccountSettings struct {
			Paging struct {
				Count int     `json:"count"`
				Next  *string `json:"next"`
			} `json:"paging"`
			Items []struct {
				AccountSetting map[string]any `json:"accountSetting"`
			} `json:"items"`
		} `json:"accountSettings"`
	}
	if err := b.Admin.Do(ctx, "GET", "/svc/account/domains/default/users?offset=0&limit=2", nil, &out); err != nil {
		t.Fatal(err)
	}
	if out.AccountSettings.Paging.Count != 2 || out.AccountSettings.Paging.Next == nil {
		t.Fatalf("page = %+v", out.AccountSettings)
	}
	for _, it := range out.AccountSettings.Items {
		for k := range it.AccountSetting {
			if strings.Contains(strings.ToLower(k), "password") {
				t.Fatalf("listing carries %s", k)
			}
		}
	}
	if err := b.Admin.Do(ctx, "GET", "/svc/account/domains/default/users?login=jane@example.com", nil, &out); err != nil ||
		len(out.AccountSettings.Items) != 1 || out.AccountSettings.Items[0].AccountSetting["login"] != "jane@example.com" {
		t.Fatalf("login filter = %+v, %v", out.AccountSettings.Items, err)
	}
	err := jane.Do(ctx, "GET", "/svc/account/domains/default/users", nil, nil)
	var e *client.Error
	if client.StatusOf(err) != 403 || !asClientError(err, &e) || e.Message != "Can be accessed only by domain admin" {
		t.Fatalf("non-admin listing: %v", err)
	}

	projectURI, _ := b.Admin.CreateProject(ctx, "P", "")
	viewer, _ := b.Admin.RoleURI(ctx, projectURI, "readOnlyUserRole")
	if _, err := b.Admin.AddProjectUser(ctx, projectURI, janeURI, viewer); err != nil {
		t.Fatal(err)
	}
	if err := b.Admin.DeleteUser(ctx, janeURI); err != nil {
		t.Fatal(err)
	}
	// Her sessions end and her membership goes.
	if _, err := jane.Projects(ctx, janeURI); err == nil {
		t.Fatal("deleted user's session still works")
	}
	var users struct {
		Users []any `json:"users"`
	}
	if err := b.Admin.Do(ctx, "GET", projectURI+"/users", nil, &users); err != nil || len(users.Users) != 1 {
		t.Fatalf("members after delete = %d, %v", len(users.Users), err)
	}
	if err := b.Admin.DeleteUser(ctx, janeURI); client.StatusOf(err) != 404 {
		t.Fatalf("second delete: %v, want 404", err)
	}
	// The last domain admin cannot delete themself.
	if err := b.Admin.DeleteUser(ctx, b.AdminProfile); client.StatusOf(err) != 409 {
		t.Fatalf("deleting the last admin: %v, want 409", err)
	}
}

func asClientError(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestLastProjectAdminStays(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	ctx := context.Background()
	projectURI, _ := b.Admin.CreateProject(ctx, "P", "")
	res, err := b.Admin.SetProjectUserStatus(ctx, projectURI, false, b.AdminProfile)
	if err != nil || len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Message, "at least one enabled admin") {
		t.Fatalf("disable last admin = %+v, %v", res, err)
	}
}
