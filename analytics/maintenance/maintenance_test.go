package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a maintenance service over a fresh data folder with the users owner,
// friend and stranger, and the project src of owner with the devs model and data.
type fixture struct {
	st    *store.Store
	md    *analytics.Service
	m     *Service
	clock *testClock
	users map[string]Caller
	src   string
	dir   string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, clock: &testClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}, users: map[string]Caller{}, dir: dir}
	now := f.clock.now()
	if err := st.EnsureDomain(ctx, "default", now); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"owner", "friend", "stranger", "admin"} {
		c := Caller{UserID: store.NewID(32), Login: strings.ToUpper(name[:1]) + name[1:] + "@x.io", DomainAdmin: name == "admin"}
		if err := st.CreateUser(ctx, store.User{ID: c.UserID, Domain: "default", Login: c.Login, PasswordHash: "x",
			IsDomainAdmin: c.DomainAdmin, Created: now, Updated: now}); err != nil {
			t.Fatal(err)
		}
		f.users[name] = c
	}
	f.src = f.project(t, "owner")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if f.md, err = analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(dir, "warehouse"), Clock: clock.NowFrom(f.clock.now)}); err != nil {
		t.Fatal(err)
	}
	pool := task.New(st, task.Config{Clock: clock.NowFrom(f.clock.now)}, log)
	if f.m, err = New(ctx, f.md, st, pool, Options{Dir: filepath.Join(dir, "archives"), Clock: clock.NowFrom(f.clock.now)}, log); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- pool.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		f.md.Close()
		st.Close()
	})
	f.devs(t, f.src)
	return f
}

func (f *fixture) project(t *testing.T, owner string) string {
	t.Helper()
	pid := store.NewID(32)
	now := f.clock.now()
	if err := f.st.CreateProject(context.Background(), store.Project{ID: pid, Title: "P", State: store.ProjectEnabled,
		Author: f.users[owner].UserID, Contributor: f.users[owner].UserID, Created: now, Updated: now}, "adminRole"); err != nil {
		t.Fatal(err)
	}
	return pid
}

func (f *fixture) devs(t *testing.T, pid string) {
	t.Helper()
	ctx := context.Background()
	script, err := os.ReadFile("../ldm/testdata/devs.maql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.md.Manage(ctx, pid, f.users["owner"].UserID, string(script)); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{
		{"dataset.devs", "id,nm_email,nm_name\nd1,a@x.io,Al\nd2,b@x.io,Bea\n"},
		{"dataset.commits", "id,f_lines,devs_id,dt_committed_on_id\nc1,10.5,d1,2024-01-31\nc2,3,d2,2024-02-01\n"},
	} {
		if _, err := f.md.Load(ctx, pid, l[0], analytics.LoadFull, strings.NewReader(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.md.CreateObject(ctx, pid, f.users["owner"].UserID, analytics.Input{Identifier: "metric.lines", Title: "Lines",
		Metric: &analytics.MetricContent{Expression: "SELECT SUM({fact.commits.lines})"}}); err != nil {
		t.Fatal(err)
	}
}

// wait polls a task until it is no longer running.
func (f *fixture) wait(t *testing.T, pid, id string) store.Task {
	t.Helper()
	for range 10000 {
		got, err := f.st.TaskByID(context.Background(), pid, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.TaskRunning {
			return got
		}
		time.Sleep(time.Millisecond) // polling, as a client does; nothing is timed
	}
	t.Fatalf("task %s is still running", id)
	return store.Task{}
}

func (f *fixture) export(t *testing.T, opt ExportOptions) Artifact {
	t.Helper()
	a, err := f.m.ExportProject(context.Background(), f.users["owner"], f.src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.wait(t, f.src, a.Task.ID); got.Status != store.TaskOK {
		t.Fatalf("export %+v %s", got, got.Messages)
	}
	return a
}

func messageOf(t store.Task) string {
	msgs := task.Decode(t.Messages)
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].Text()
}

func TestWhoMayImportAToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := f.export(t, ExportOptions{Authorized: []string{"friend@X.IO"}})
	partial, err := f.m.ExportObjects(ctx, f.users["owner"], f.src, []string{analytics.ObjectURI(f.src, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, f.src, partial.Task.ID)
	tests := []struct {
		name   string
		caller string
		token  string
		kind   string
		later  time.Duration
		reason string // "" when allowed
	}{
		{"the exporter", "owner", a.Token, store.ArtifactProject, 0, ""},
		{"an authorized login, in any case", "friend", a.Token, store.ArtifactProject, 0, ""},
		{"a domain admin", "admin", a.Token, store.ArtifactProject, 0, ""},
		{"another user", "stranger", a.Token, store.ArtifactProject, 0, "is not a valid export token"},
		{"an unknown token", "owner", "NOPE", store.ArtifactProject, 0, "is not a valid export token"},
		{"a token of the other kind", "owner", partial.Token, store.ArtifactProject, 0, "is not a valid export token"},
		{"just before expiry", "owner", a.Token, store.ArtifactProject, 48*time.Hour - time.Second, ""},
		{"at expiry", "owner", a.Token, store.ArtifactProject, 48 * time.Hour, "has expired"},
		{"expired, asked by another user", "stranger", a.Token, store.ArtifactProject, 49 * time.Hour, "is not a valid export token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.clock.advance(tc.later)
			defer f.clock.advance(-tc.later)
			_, err := f.m.artifact(ctx, f.users[tc.caller], tc.token, tc.kind)
			var te *TokenError
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.reason != "" && (!errors.As(err, &te) || te.Reason != tc.reason):
				t.Fatalf("err %v, want the token %s", err, tc.reason)
			}
		})
	}
}

func TestExportAndImportProject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		opt         ExportOptions
		wantMembers []string
		wantRows    int64
	}{
		{"model and objects", ExportOptions{}, nil, 0},
		{"with users", ExportOptions{Users: true}, []string{"Friend@x.io ENABLED editorRole", "Owner@x.io ENABLED adminRole"}, 0},
		{"with data", ExportOptions{Data: true}, nil, 2 + 2 + 2 + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			if _, err := f.st.ApplyMemberChanges(ctx, f.src, "adminRole", []store.MemberChange{
				{UserID: f.users["friend"].UserID, Status: store.MemberEnabled, Roles: []string{"editorRole"}, Add: true},
			}, f.clock.now()); err != nil {
				t.Fatal(err)
			}
			a := f.export(t, tc.opt)

			// The admin imports into a project of their own.
			target := f.project(t, "admin")
			started, err := f.m.ImportProject(ctx, f.users["admin"], target, a.Token)
			if err != nil {
				t.Fatal(err)
			}
			done := f.wait(t, target, started.ID)
			if done.Status != store.TaskOK {
				t.Fatalf("import %+v %s", done, messageOf(done))
			}
			var members []string
			list, _ := f.st.Members(ctx, target)
			for _, m := range list {
				if m.UserID != f.users["admin"].UserID {
					members = append(members, m.User.Login+" "+m.Status+" "+strings.Join(m.Roles, " "))
				}
			}
			slices.Sort(members)
			if !slices.Equal(members, tc.wantMembers) {
				t.Fatalf("members %v, want %v", members, tc.wantMembers)
			}
			snap, err := f.md.TakeSnapshot(ctx, target, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Objects) == 0 || !strings.Contains(string(snap.Model), "dataset.commits") {
				t.Fatalf("imported snapshot %+v", snap)
			}
			rows := f.rows(t, target)
			if rows != tc.wantRows {
				t.Fatalf("imported %d rows, want %d", rows, tc.wantRows)
			}
			// Now the project is not empty.
			if _, err := f.m.ImportProject(ctx, f.users["admin"], target, a.Token); !errors.Is(err, analytics.ErrNotEmpty) {
				t.Fatalf("import into a project with objects: %v", err)
			}
		})
	}
}

// rows counts the rows of every table of the project's warehouse.
func (f *fixture) rows(t *testing.T, pid string) int64 {
	t.Helper()
	dir, err := os.MkdirTemp(f.md.TempDir(), "count")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	snap, err := f.md.TakeSnapshot(context.Background(), pid, dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, tb := range snap.Tables {
		n += tb.Rows
	}
	return n
}

func TestPartialImportReportsInItsTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	objs, _ := f.st.ObjectsByIdentifiers(ctx, f.src, []string{"metric.lines"})
	metric := analytics.ObjectURI(f.src, objs[0].ID)
	missing := analytics.ObjectURI(f.src, 999999)

	bad, err := f.m.ExportObjects(ctx, f.users["owner"], f.src, []string{metric, missing})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.wait(t, f.src, bad.Task.ID); got.Status != store.TaskError ||
		messageOf(got) != "The object with uri ("+missing+") doesn't exists." {
		t.Fatalf("export of a missing object: %+v %s", got, got.Messages)
	}
	good, err := f.m.ExportObjects(ctx, f.users["owner"], f.src, []string{metric})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, f.src, good.Task.ID)

	withModel, empty := f.project(t, "owner"), f.project(t, "owner")
	f.devs(t, withModel)
	tests := []struct {
		name, caller, pid, token, status, msg string
	}{
		{"into a project with the model", "owner", withModel, good.Token, store.TaskOK, ""},
		{"into a project without it", "owner", empty, good.Token, store.TaskError, "The object with uri (/svc/md/" + f.src + "/obj/"},
		{"an unknown token", "owner", withModel, "NOPE", store.TaskError, "The token is not valid."},
		{"someone else's token", "stranger", withModel, good.Token, store.TaskError, "The token is not valid."},
		{"the token of a failed export", "owner", withModel, bad.Token, store.TaskError, "The token is not valid."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			started, err := f.m.ImportObjects(ctx, f.users[tc.caller], tc.pid, tc.token, ImportOptions{OverwriteNewer: true})
			if err != nil {
				t.Fatal(err)
			}
			got := f.wait(t, tc.pid, started.ID)
			if got.Status != tc.status || !strings.HasPrefix(messageOf(got), tc.msg) {
				t.Fatalf("task %+v %q", got, messageOf(got))
			}
		})
	}
}

func TestValidateTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var input *analytics.InputError
	if _, err := f.m.Validate(ctx, f.users["owner"], f.src, []string{"ldm", "nope"}); !errors.As(err, &input) ||
		input.Field != "validateProject[1]" {
		t.Fatalf("unknown check: %v", err)
	}
	if _, err := f.m.Validate(ctx, f.users["owner"], f.src, nil); !errors.As(err, &input) {
		t.Fatalf("no checks: %v", err)
	}
	started, err := f.m.Validate(ctx, f.users["owner"], f.src, []string{"ldm", "PDM", "io"})
	if err != nil {
		t.Fatal(err)
	}
	got := f.wait(t, f.src, started.ID)
	var v analytics.Validation
	if err := json.Unmarshal(got.Result, &v); err != nil || got.Status != store.TaskOK || v.ErrorFound != 0 || len(v.Results) != 3 {
		t.Fatalf("validation %+v %s", got, got.Result)
	}
}

func TestPruneAndSweep(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := f.export(t, ExportOptions{})
	stray := filepath.Join(f.m.cfg.Dir, "left.tar.123.tmp")
	if err := os.WriteFile(stray, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.m.Prune(ctx)
	if _, err := f.m.artifact(ctx, f.users["owner"], a.Token, store.ArtifactProject); err != nil {
		t.Fatalf("prune removed a live archive: %v", err)
	}
	f.clock.advance(48 * time.Hour)
	f.m.Prune(ctx)
	hash := tokenHash(a.Token)
	if _, err := f.st.ArtifactByToken(ctx, hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired artifact kept: %v", err)
	}
	stale := filepath.Join(f.md.TempDir(), "import-123")
	if err := os.MkdirAll(filepath.Join(stale, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	f.m.sweep(ctx)
	if entries, _ := os.ReadDir(f.m.cfg.Dir); len(entries) != 0 {
		t.Fatalf("archives left: %v", entries)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("working folder of an import left: %v", err)
	}
}
