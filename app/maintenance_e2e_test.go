package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
)

// adminOf logs a browser and a Go client in as the domain admin of the service at url.
func adminOf(t *testing.T, url string) (*browser, *client.Client) {
	t.Helper()
	admin := newBrowser(t, url, "ua-admin")
	admin.loginWithToken("admin@herald.local", apptest.AdminPassword)
	c := client.New(url, client.WithUserAgent("ua-client"))
	if _, err := c.Login(context.Background(), "admin@herald.local", apptest.AdminPassword); err != nil {
		t.Fatal(err)
	}
	return admin, c
}

// addMember creates a domain user and makes it a member of the project with the role.
func addMember(t *testing.T, c *client.Client, pid, login, role string) {
	t.Helper()
	ctx := context.Background()
	profile, err := c.CreateUser(ctx, "default", client.NewUser{Login: login, Password: "S3cret-pass", FirstName: "A", LastName: "B"})
	if err != nil {
		t.Fatal(err)
	}
	roleURI, err := c.RoleURI(ctx, "/svc/projects/"+pid, role)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.AddProjectUser(ctx, "/svc/projects/"+pid, profile, roleURI); err != nil || len(res.Successful) != 1 {
		t.Fatalf("add %s: %+v %v", login, res, err)
	}
}

// members returns the project's members as "login role-id status", sorted.
func (m *mdClient) members() []string {
	m.t.Helper()
	var out []string
	for _, u := range m.get("/svc/projects/" + m.pid + "/users")["users"].([]any) {
		content := dig(u, "user", "content").(map[string]any)
		var roles []string
		for _, r := range content["userRoles"].([]any) {
			roles = append(roles, r.(string)[strings.LastIndex(r.(string), "/")+1:])
		}
		out = append(out, fmt.Sprintf("%s %s %s", content["login"], strings.Join(roles, ","), content["status"]))
	}
	slices.Sort(out)
	return out
}

func TestProjectExportImportRoundTrip(t *testing.T) {
	gate.Parallel(t)
	a, out, _ := startDemo(t, t.TempDir())
	admin, c := adminOf(t, a.URL())
	pid := demoProject.FindStringSubmatch(out.String())[1]
	src := &mdClient{t: t, b: admin, pid: pid, md: "/svc/md/" + pid}

	// A report filtered on one element: element ids must mean the same in the copy.
	uris := src.uris("attr.regions.id", "label.regions.name", "label.products.name", "metric.revenue")
	def := src.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "North products"},
		"content": map[string]any{"format": "grid", "grid": map[string]any{
			"rows": []any{gridAttr(uris["label.products.name"])}, "columns": []any{"metricGroup"},
			"metrics": []any{map[string]any{"uri": uris["metric.revenue"], "alias": ""}}},
			"filters": []any{map[string]any{"expression": fmt.Sprintf("[%s] IN ([%[1]s/elements?id=2])", uris["attr.regions.id"])}}}}}))
	src.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "North products", "identifier": "report.north"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
	addMember(t, c, pid, "ann@x.io", "editorRole")

	token := src.exportProject(`{"exportUsers":true,"exportData":"1"}`)
	dst := newMD(t, nil, admin)
	state := dst.importProject(token)
	if msg, _ := state["msg"].(string); state["status"] != "OK" || !strings.HasPrefix(msg, "Imported the model") ||
		!strings.HasSuffix(msg, "and 2 users") {
		t.Fatalf("import %v", state)
	}
	if n := sameReports(t, c, src, dst); n != 4 { // the demo's three and the filtered one
		t.Fatalf("compared %d reports", n)
	}
	if got, want := dst.members(), src.members(); !slices.Equal(got, want) {
		t.Fatalf("members of the copy %v, of the source %v", got, want)
	}
	if got, want := len(dst.objects()), len(src.objects()); got != want {
		t.Fatalf("the copy has %d objects, the source %d", got, want)
	}
	if v := dst.validate("LDM", "PDM", "IO"); v["error_found"] != 0.0 {
		t.Fatalf("the copy does not validate: %v", v)
	}
}

func TestProjectExportFlags(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin, _ := adminOf(t, b.URL)
	src := newMD(t, b, admin)
	wantStatus(t, src.manage(salesMAQL), 200)
	wantStatus(t, src.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, src.load("dataset.sales", "full", salesCSV), 200)
	addMember(t, b.Admin, src.pid, "eve@x.io", "readOnlyUserRole")

	tests := []struct {
		body      string
		wantUsers bool
		wantData  bool
	}{
		{`{"exportUsers":false,"exportData":false}`, false, false},
		{`{"exportUsers":true,"exportData":0}`, true, false},
		{`{"exportUsers":"0","exportData":1}`, false, true},
		{`{"exportUsers":"1","exportData":"1"}`, true, true},
		{`{}`, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			token := src.exportProject(tc.body)
			dst := newMD(t, b, admin)
			if state := dst.importProject(token); state["status"] != "OK" {
				t.Fatalf("import %v", state)
			}
			hasEve := slices.Contains(dst.members(), "eve@x.io 3 ENABLED")
			if hasEve != tc.wantUsers {
				t.Fatalf("members %v", dst.members())
			}
			titles, _ := dst.elements(dst.uris("label.stores.name")["label.stores.name"] + "/elements")
			if (len(titles) == 3) != tc.wantData || (len(titles) != 0) != tc.wantData {
				t.Fatalf("store names %v", titles)
			}
			// The model and objects come every time.
			if dst.uris("fact.sales.amount")["fact.sales.amount"] == "" {
				t.Fatal("the model did not come")
			}
		})
	}
	for _, body := range []string{`{"exportUsers":"yes"}`, `{"exportData":2}`, `{"exportProject":{}}`, `{"authorizedUsers":"a@x.io"}`} {
		r := admin.do("POST", src.md+"/maintenance/export", `{"exportProject":`+body+`}`)
		if r.status != 400 {
			t.Errorf("export %s: %d %s", body, r.status, r.body)
		}
	}
}

func TestProjectImportTokens(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin, _ := adminOf(t, b.URL)
	src := newMD(t, b, admin)
	wantStatus(t, src.manage(salesMAQL), 200)

	// Project admins who are not domain admins: one authorized by login, one not.
	friendClient, _ := b.NewUser(t, "friend@x.io")
	strangerClient, _ := b.NewUser(t, "stranger@x.io")
	ctx := context.Background()
	own := func(c *client.Client, login string) *mdClient {
		uri, err := c.CreateProject(ctx, "Own", "")
		if err != nil {
			t.Fatal(err)
		}
		br := newBrowser(t, b.URL, "ua-"+login)
		br.loginWithToken(login, "S3cret-pass")
		pid := strings.TrimPrefix(uri, "/svc/projects/")
		return &mdClient{t: t, b: br, pid: pid, md: "/svc/md/" + pid}
	}
	friend, stranger := own(friendClient, "friend@x.io"), own(strangerClient, "stranger@x.io")

	token := src.exportProject(`{"exportUsers":false,"exportData":false,"authorizedUsers":["Friend@x.io"]}`)
	partial := src.partialExport(src.uris("fact.sales.amount")["fact.sales.amount"])

	refused := func(m *mdClient, token, why string) {
		t.Helper()
		r := m.b.do("POST", m.md+"/maintenance/import", jsonString(map[string]any{"importProject": map[string]any{"token": token}}))
		wantStatus(t, r, 400)
		e := r.errorBody(t)
		if params := e["parameters"].([]any); len(params) != 1 || params[0] != "importProject.token" || !strings.Contains(e["message"].(string), why) {
			t.Fatalf("refusal %s", r.body)
		}
	}
	refused(stranger, token, "is not a valid export token")
	refused(friend, "NOT-A-TOKEN", "is not a valid export token")
	refused(friend, partial, "is not a valid export token")
	if r := friend.b.do("POST", friend.md+"/maintenance/import", `{"importProject":{}}`); r.status != 400 {
		t.Fatalf("no token: %d %s", r.status, r.body)
	}
	// Into a project that is not empty.
	r := admin.do("POST", src.md+"/maintenance/import", jsonString(map[string]any{"importProject": map[string]any{"token": token}}))
	if r.status != 400 || !strings.Contains(r.body, "not empty") {
		t.Fatalf("import into a project with a model: %d %s", r.status, r.body)
	}

	// Only members poll a project's tasks.
	if r := stranger.b.do("GET", src.md+"/etltask/whatever", ""); r.status != 404 {
		t.Fatalf("a stranger polled: %d %s", r.status, r.body)
	}

	// Expired for everyone, the authorized login included.
	b.Clock.Advance(48 * time.Hour)
	for _, br := range []*browser{friend.b, admin} {
		wantStatus(t, br.do("GET", "/svc/account/token", ""), 200) // the temporary token expired with the hours
	}
	refused(friend, token, "has expired")
	fresh := src.exportProject(`{"authorizedUsers":["friend@x.io"]}`)
	if state := friend.importProject(fresh); state["status"] != "OK" {
		t.Fatalf("authorized import %v", state)
	}
	if friend.uris("fact.sales.amount")["fact.sales.amount"] == "" {
		t.Fatal("the authorized import brought no model")
	}
}
