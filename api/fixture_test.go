package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/maintenance"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
)

// The roles a request is made in, the columns of the route table.
const (
	anonymous   = iota // no login
	tenant             // the admin of another domain
	viewer             // a member with the read-only role
	editor             // a member with the editor role; the {uid} of the profile and subscription routes
	projAdmin          // the project's admin
	domainAdmin        // the admin of the service's domain
	numRoles
)

var roleNames = [numRoles]string{"anonymous", "tenant", "viewer", "editor", "projectAdmin", "domainAdmin"}

const fixturePassword = "S3cret-pass"

// fixture is the API over a real store, warehouse, executor, exporter and
// maintenance service in t.TempDir(), served on loopback, with a user of each
// role logged in, a project whose members they are, and a channel and a
// subscription of the editor.
type fixture struct {
	srv     *Server
	url     string
	st      *store.Store
	clients [numRoles]*client.Client // nil for anonymous
	uids    [numRoles]string
	pid     string
	cid     string // the editor's channel
	sid     string // the editor's subscription
	seq     int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	md, err := analytics.New(ctx, analytics.Options{Store: st, Dir: filepath.Join(dir, "warehouse")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { md.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	exec := xtab.New(st, md, xtab.Config{Dir: filepath.Join(dir, "results")}, log)
	exp := export.New(st, exec, export.Options{Dir: filepath.Join(dir, "exports")}, log)
	pool := task.New(st, task.Config{}, log)
	maint, err := maintenance.New(ctx, md, st, pool, maintenance.Options{Dir: filepath.Join(dir, "archives")}, log)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	kinds := channels.MustRegistry(email.Descriptor)
	ns := notify.New(st, notify.DefaultConfig(), notify.Options{Domain: "default", Kinds: kinds, Box: box, Logger: log,
		Settings: map[channels.Kind]channels.Settings{email.Descriptor.Kind: email.Descriptor.Settings()}})
	f := &fixture{st: st}
	f.srv = New(st, Options{Domain: "default", Logger: log, Auth: AuthConfig{PasswordCost: bcrypt.MinCost},
		Notify: ns, Analytics: md, Executor: exec, Exporter: exp, Maintenance: maint})
	hs := httptest.NewServer(f.srv)
	t.Cleanup(hs.Close)
	f.url = hs.URL
	f.users(t)
	f.pid = f.newProject(t)
	f.cid = f.newChannel(t)
	f.sid = f.newSubscription(t)
	return f
}

// users creates and logs in a user of each role but the anonymous one.
func (f *fixture) users(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	for _, d := range []string{"default", "acme"} {
		if err := f.st.EnsureDomain(ctx, d, now); err != nil {
			t.Fatal(err)
		}
	}
	for role := tenant; role < numRoles; role++ {
		domain := "default"
		if role == tenant {
			domain = "acme"
		}
		f.uids[role] = f.newUser(t, roleNames[role], domain, role == tenant || role == domainAdmin)
		f.clients[role] = f.login(t, roleNames[role])
	}
}

// newUser creates a user of domain straight in the store and returns its id.
func (f *fixture) newUser(t *testing.T, name, domain string, admin bool) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(fixturePassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	u := store.User{ID: store.NewID(32), Domain: domain, Login: name + "@example.com", PasswordHash: string(hash),
		FirstName: name, LastName: "Test", IsDomainAdmin: admin, Created: now, Updated: now}
	if err := f.st.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func (f *fixture) login(t *testing.T, name string) *client.Client {
	t.Helper()
	c := client.New(f.url, client.WithUserAgent("routes-"+name))
	if _, err := c.Login(context.Background(), name+"@example.com", fixturePassword); err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	return c
}

// newProject creates a project whose admin is the project admin, with the
// editor and the viewer as members, and returns its id.
func (f *fixture) newProject(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	admin := f.clients[projAdmin]
	uri, err := admin.CreateProject(ctx, "Sales", "")
	if err != nil {
		t.Fatal(err)
	}
	for role, id := range map[int]string{editor: notify.RoleEditor, viewer: notify.RoleViewer} {
		r, err := admin.RoleURI(ctx, uri, id)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := admin.AddProjectUser(ctx, uri, profileURI(f.uids[role]), r); err != nil || len(res.Failed) > 0 {
			t.Fatalf("add %s: %+v %v", roleNames[role], res, err)
		}
	}
	return strings.TrimPrefix(uri, "/svc/projects/")
}

// newChannel creates an e-mail channel of the editor and returns its id.
func (f *fixture) newChannel(t *testing.T) string {
	t.Helper()
	var out struct {
		ChannelConfiguration struct {
			Meta struct{ URI string } `json:"meta"`
		} `json:"channelConfiguration"`
	}
	in := map[string]any{"channelConfiguration": map[string]any{
		"configuration": map[string]any{"emailConfiguration": map[string]any{"to": "editor@example.com"}},
		"meta":          map[string]any{"title": "Mail"}}}
	if err := f.clients[editor].Do(context.Background(), http.MethodPost, profileURI(f.uids[editor])+"/channelConfigurations", in, &out); err != nil {
		t.Fatal(err)
	}
	uri := out.ChannelConfiguration.Meta.URI
	return uri[strings.LastIndexByte(uri, '/')+1:]
}

// newSubscription creates a subscription of the editor in the project,
// sending to the editor's channel, and returns its id.
func (f *fixture) newSubscription(t *testing.T) string {
	t.Helper()
	return f.subscribe(t, f.pid, map[string]any{
		"triggers":  []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 * * MON-FRI", "timezone": "UTC"}}},
		"condition": map[string]any{"condition": map[string]any{"expression": "true"}},
		"message":   map[string]any{"template": map[string]any{"expression": "Revenue fell"}},
		"subject":   map[string]any{"template": map[string]any{"expression": "Revenue alert"}},
		"channels":  []any{profileURI(f.uids[editor]) + "/channelConfigurations/" + f.cid},
		"meta":      map[string]any{"title": "Revenue watch"},
	})
}

// subscribe creates the subscription sub of the editor in project pid and returns its id.
func (f *fixture) subscribe(t *testing.T, pid string, sub map[string]any) string {
	t.Helper()
	var out struct {
		Subscription struct {
			Meta struct{ URI string } `json:"meta"`
		} `json:"subscription"`
	}
	path := projectURI(pid) + "/users/" + f.uids[editor] + "/subscriptions"
	if err := f.clients[editor].Do(context.Background(), http.MethodPost, path, map[string]any{"subscription": sub}, &out); err != nil {
		t.Fatal(err)
	}
	uri := out.Subscription.Meta.URI
	return uri[strings.LastIndexByte(uri, '/')+1:]
}

// do sends one request as role, without following redirects, and returns the
// status and the body.
func (f *fixture) do(t *testing.T, role int, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if c := f.clients[role]; c != nil {
		hc = c.HTTPClient()
		req.Header.Set("User-Agent", "routes-"+roleNames[role])
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(data)
}

// message is the filled-in message of an error body, for a failure's report.
func errMessage(body string) string {
	var e errorBody
	if json.Unmarshal([]byte(body), &e) != nil || e.Error.Message == "" {
		if len(body) > 120 {
			return body[:120] + "..."
		}
		return body
	}
	args := make([]any, len(e.Error.Parameters))
	for i, p := range e.Error.Parameters {
		args[i] = p
	}
	return fmt.Sprintf(e.Error.Message, args...)
}
