package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSetup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(tmp, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	must(t, st.EnsureDomain(ctx, "d", now))
	must(t, st.CreateUser(ctx, store.User{ID: "u", Domain: "d", Login: "u@x.io", PasswordHash: "x", Created: now, Updated: now}))
	must(t, st.CreateProject(ctx, store.Project{ID: "demo", Title: "Demo", State: store.ProjectEnabled, Author: "u", Contributor: "u",
		Created: now, Updated: now}, "adminRole"))
	md, err := analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(tmp, "warehouse")})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()

	p, err := Setup(ctx, md, os.DirFS(dir), "demo", "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Metrics) != 4 || len(p.Reports) != 3 || p.Reports["report.revenue_by_region"] == "" {
		t.Fatalf("project = %+v", p)
	}
	_, reports, err := md.List(ctx, "demo", "reports")
	if err != nil || len(reports) != 3 {
		t.Fatalf("reports = %v, %v", reports, err)
	}
	version, err := md.DataVersion(ctx, "demo")
	if err != nil || version < 4 {
		t.Fatalf("data version %d (%v): the model and three loads each change it", version, err)
	}
	// A second setup into the same project fails: the model is there already.
	if _, err := Setup(ctx, md, os.DirFS(dir), "demo", "u"); err == nil {
		t.Fatal("a second setup succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
