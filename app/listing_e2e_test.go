package app_test

import (
	"context"
	"slices"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
)

// TestProjectListingFollowsEveryChange lists the projects after each change
// that moves a project into or out of a user's listing, or changes how it
// reads: created, joined, disabled, enabled, deleted, and the member deleted.
// The listing is answered from what was read before as long as nothing
// changed, so each answer here must already show the change before it.
func TestProjectListingFollowsEveryChange(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	ctx := context.Background()
	jane, janeURI := b.NewUser(t, "jane@example.com")
	titles := func(c *client.Client, profile string) []string {
		t.Helper()
		list, err := c.Projects(ctx, profile)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range list {
			out = append(out, p.Meta.Title)
		}
		slices.Sort(out)
		return out
	}
	want := func(step string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("after %s: %q, want %q", step, got, want)
		}
	}
	before := titles(b.Admin, b.AdminProfile)
	sales, err := b.Admin.CreateProject(ctx, "Sales", "")
	if err != nil {
		t.Fatal(err)
	}
	want("creating Sales", titles(b.Admin, b.AdminProfile), append(slices.Clone(before), "Sales")...)
	want("creating Sales, Jane's", titles(jane, janeURI))
	editor, err := b.Admin.RoleURI(ctx, sales, "editorRole")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Admin.AddProjectUser(ctx, sales, janeURI, editor); err != nil {
		t.Fatal(err)
	}
	want("adding Jane", titles(jane, janeURI), "Sales")
	want("adding Jane, seen by the admin", titles(b.Admin, janeURI), "Sales")
	if _, err := b.Admin.SetProjectUserStatus(ctx, sales, false, janeURI); err != nil {
		t.Fatal(err)
	}
	want("disabling Jane", titles(jane, janeURI))
	if _, err := b.Admin.SetProjectUserStatus(ctx, sales, true, janeURI); err != nil {
		t.Fatal(err)
	}
	want("enabling Jane", titles(jane, janeURI), "Sales")
	ops, err := jane.CreateProject(ctx, "Ops", "")
	if err != nil {
		t.Fatal(err)
	}
	want("Jane creating Ops", titles(jane, janeURI), "Ops", "Sales")
	if err := b.Admin.Do(ctx, "DELETE", sales, nil, nil); err != nil {
		t.Fatal(err)
	}
	want("deleting Sales", titles(jane, janeURI), "Ops")
	want("deleting Sales, the admin's", titles(b.Admin, b.AdminProfile), before...)
	if err := b.Admin.DeleteUser(ctx, janeURI); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Admin.Projects(ctx, janeURI); client.StatusOf(err) != 404 {
		t.Fatalf("a deleted user's projects: %v, want 404", err)
	}
	_ = ops
}
