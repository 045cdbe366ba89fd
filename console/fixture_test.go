package console

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

const testPassword = "S3cret-pass"

// fixture is the console and the API over a real store and warehouse in
// t.TempDir(), served on loopback: Jane administers the project Sales, which
// has the metric Revenue, and has a channel and a subscription that watches
// Revenue; Mallory is another user of the domain.
type fixture struct {
	url     string
	st      *store.Store
	pid     string
	jane    string // user ids
	mallory string
	metric  string // Revenue's URI
	cid     string // Jane's channel
	sid     string // Jane's subscription
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
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	kinds := channels.MustRegistry(email.Descriptor)
	ns := notify.New(st, notify.DefaultConfig(), notify.Options{Domain: "default", Kinds: kinds, Box: box, Logger: log,
		Settings: map[channels.Kind]channels.Settings{email.Descriptor.Kind: email.Descriptor.Settings()}})
	srv := api.New(st, api.Options{Domain: "default", Logger: log, Auth: api.AuthConfig{PasswordCost: bcrypt.MinCost},
		Notify: ns, Analytics: md})
	con, err := New(Options{API: srv, Kinds: kinds, Key: key, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	root := http.NewServeMux()
	root.Handle(Prefix, con)
	root.Handle("/", srv)
	hs := httptest.NewServer(root)
	t.Cleanup(hs.Close)
	f := &fixture{url: hs.URL, st: st}
	f.populate(t)
	return f
}

// populate creates the users, the project, its metric, Jane's channel and her subscription.
func (f *fixture) populate(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	must(t, f.st.EnsureDomain(ctx, "default", now))
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	must(t, err)
	for _, u := range []*string{&f.jane, &f.mallory} {
		*u = store.NewID(32)
	}
	for id, login := range map[string]string{f.jane: "jane", f.mallory: "mallory"} {
		must(t, f.st.CreateUser(ctx, store.User{ID: id, Domain: "default", Login: login + "@example.com", PasswordHash: string(hash),
			FirstName: login, LastName: "Test", Created: now, Updated: now}))
	}
	f.pid = store.NewID(32)
	must(t, f.st.CreateProject(ctx, store.Project{ID: f.pid, Title: "Sales", State: store.ProjectEnabled, Author: f.jane,
		Contributor: f.jane, Created: now, Updated: now}, notify.RoleAdmin))
	oid, err := f.st.CreateObject(ctx, store.Object{ProjectID: f.pid, Category: "metric", Identifier: "metric.revenue", Title: "Revenue",
		Content: []byte(`{"expression":"SELECT 1"}`), Author: f.jane, Contributor: f.jane, Created: now, Updated: now}, nil)
	must(t, err)
	f.metric = fmt.Sprintf("/svc/md/%s/obj/%d", f.pid, oid)

	jane := f.signIn(t, "jane")
	var ch struct {
		ChannelConfiguration struct{ Meta struct{ URI string } } `json:"channelConfiguration"`
	}
	jane.api(t, http.MethodPost, "/svc/account/profile/"+f.jane+"/channelConfigurations", map[string]any{"channelConfiguration": map[string]any{
		"configuration": map[string]any{"emailConfiguration": map[string]any{"to": "jane@example.com"}},
		"meta":          map[string]any{"title": "Jane's mail"}}}, &ch)
	f.cid = last(ch.ChannelConfiguration.Meta.URI)
	var sub wire.SubscriptionDoc
	jane.api(t, http.MethodPost, subsPath(f.pid, f.jane), map[string]any{"subscription": map[string]any{
		"triggers":  []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 * * MON-FRI", "timezone": "UTC"}}},
		"condition": map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + f.metric + "') lt 16"}},
		"message":   map[string]any{"template": map[string]any{"expression": "Revenue fell to ${f:executeMetric('" + f.metric + "')}"}},
		"subject":   map[string]any{"template": map[string]any{"expression": "Revenue alert"}},
		"channels":  []any{ch.ChannelConfiguration.Meta.URI},
		"meta":      map[string]any{"title": "Revenue watch"}}}, &sub)
	f.sid = subID(sub.Subscription)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// browser is a browser of the console: it keeps its cookies and does not
// follow redirects.
type browser struct {
	f  *fixture
	hc *http.Client
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{f: f, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signIn is a browser signed in through the console's sign-in form.
func (f *fixture) signIn(t *testing.T, login string) *browser {
	t.Helper()
	b := f.browser()
	page := b.get(t, "/console/login")
	res := b.post(t, "/console/login", url.Values{"csrf": {page.csrf(t)}, "login": {login + "@example.com"}, "password": {testPassword}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("sign in %s: %d %s", login, res.status, res.body)
	}
	return b
}

// answer is a response as the test reads it.
type answer struct {
	status   int
	location string
	header   http.Header
	body     string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the form token the page carries.
func (a answer) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("no CSRF token in the page: %.300s", a.body)
	}
	return m[1]
}

func (b *browser) get(t *testing.T, path string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.f.url+path, nil)
	must(t, err)
	return b.send(t, req)
}

func (b *browser) post(t *testing.T, path string, form url.Values, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.f.url+path, strings.NewReader(form.Encode()))
	must(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.send(t, req)
}

// api calls the API with the browser's session, as the console's own script would.
func (b *browser) api(t *testing.T, method, path string, in, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	must(t, err)
	req, err := http.NewRequest(method, b.f.url+path, strings.NewReader(string(data)))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	a := b.send(t, req)
	if a.status == http.StatusUnauthorized { // no temporary token yet: fetch one, as a client does
		b.get(t, "/svc/account/token")
		req, err = http.NewRequest(method, b.f.url+path, strings.NewReader(string(data)))
		must(t, err)
		req.Header.Set("Content-Type", "application/json")
		a = b.send(t, req)
	}
	if a.status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, a.status, a.body)
	}
	if out != nil {
		must(t, json.Unmarshal([]byte(a.body), out))
	}
}

func (b *browser) send(t *testing.T, req *http.Request) answer {
	t.Helper()
	req.Header.Set("User-Agent", "console-test")
	res, err := b.hc.Do(req)
	must(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	must(t, err)
	return answer{status: res.StatusCode, location: res.Header.Get("Location"), header: res.Header, body: string(data)}
}
