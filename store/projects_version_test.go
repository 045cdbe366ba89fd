package store

import (
	"context"
	"testing"
)

// TestProjectsVersionMovesWithEveryWriteOfTheListing: each write that can
// change a user's project listing moves ProjectsVersion on; reading does not.
func TestProjectsVersionMovesWithEveryWriteOfTheListing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openLedgerStore(t)
	jane := User{ID: "jane", Domain: "default", Login: "jane@example.com", PasswordHash: "x", Created: ledgerT0, Updated: ledgerT0}
	if err := s.CreateUser(ctx, jane); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		write func() error
	}{
		{"create a project", func() error {
			return s.CreateProject(ctx, Project{ID: "p2", Title: "Sales", State: ProjectEnabled, Author: "u1", Contributor: "u1",
				Created: ledgerT0, Updated: ledgerT0}, "admin")
		}},
		{"add a member", func() error {
			_, err := s.ApplyMemberChanges(ctx, "p2", "admin", []MemberChange{{UserID: "jane", Status: MemberEnabled, Roles: []string{"admin"}, Add: true}}, ledgerT0)
			return err
		}},
		{"disable a member", func() error {
			_, err := s.ApplyMemberChanges(ctx, "p2", "admin", []MemberChange{{UserID: "jane", Status: MemberDisabled}}, ledgerT0)
			return err
		}},
		{"delete a project", func() error { return s.DeleteProject(ctx, "p2", "u1", ledgerT0) }},
		{"delete a member", func() error { return s.DeleteUser(ctx, "jane") }},
	}
	for _, step := range steps {
		v := s.ProjectsVersion()
		if _, err := s.ListUserProjects(ctx, "u1", 0, -1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CountUserProjects(ctx, "u1"); err != nil {
			t.Fatal(err)
		}
		if got := s.ProjectsVersion(); got != v {
			t.Fatalf("reading the listing moved the version from %d to %d", v, got)
		}
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if s.ProjectsVersion() == v {
			t.Errorf("%s: the version stayed at %d", step.name, v)
		}
	}
}
