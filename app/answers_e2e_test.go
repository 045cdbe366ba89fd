package app_test

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// TestProjectLinksAnswer follows every link of a project, as a member sees it, and gets
// 200 from each: the caller's own roles and permissions, never a literal {uid}.
func TestProjectLinksAnswer(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t) // jane is a viewer of the project
	for _, path := range []string{"/svc/projects/" + w.pid, w.janeURI + "/projects"} {
		body := w.jane.do("GET", path, "").json(t)
		var project map[string]any
		if p, ok := body["project"]; ok {
			project = p.(map[string]any)
		} else {
			project = body["projects"].([]any)[0].(map[string]any)["project"].(map[string]any)
		}
		links := project["links"].(map[string]any)
		if len(links) < 5 {
			t.Fatalf("%s: links %v", path, links)
		}
		for name, l := range links {
			link := l.(string)
			if strings.Contains(link, "{") {
				t.Errorf("%s: link %s = %s holds a placeholder", path, name, link)
			}
			if r := w.jane.do("GET", link, ""); r.status != 200 {
				t.Errorf("%s: link %s = %s answers %d: %s", path, name, link, r.status, r.body)
			}
		}
		if want := "/svc/projects/" + w.pid + "/users/" + uid(w.janeURI) + "/roles"; links["userRoles"] != want {
			t.Errorf("userRoles = %v, want %s", links["userRoles"], want)
		}
	}
	perms := w.jane.do("GET", "/svc/projects/"+w.pid+"/users/"+uid(w.janeURI)+"/permissions", "").json(t)
	got := perms["associatedPermissions"].(map[string]any)["permissions"].(map[string]any)
	if got["canExecute"] != "1" || got["canManageProject"] != nil {
		t.Errorf("a viewer's permissions: %v", got)
	}
}

// TestSmallerAnswers: a null flag is a missing flag; identifiers come back in the order
// asked with the unknown ones listed; the TT cookie lives exactly as long as the token;
// an export of a result that does not exist is refused at once.
func TestSmallerAnswers(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	md := "/svc/md/" + w.pid

	r := w.admin.do("POST", md+"/maintenance/export", `{"exportProject":{"exportUsers":null,"exportData":0}}`)
	if r.status != 201 && r.status != 200 {
		t.Errorf("exportUsers null: %d %s", r.status, r.body)
	}
	r = w.admin.do("POST", md+"/maintenance/export", `{"exportProject":{"exportUsers":"maybe"}}`)
	if r.status != 400 || !strings.Contains(r.body, "exportProject.exportUsers") {
		t.Errorf("a bad exportUsers: %d %s, want 400 naming exportProject.exportUsers", r.status, r.body)
	}

	r = w.admin.do("POST", md+"/identifiers",
		`{"identifierToUri":["fact.sales.amount","nope.one","attr.stores.id","dataset.sales","nope.two","attr.stores.id"]}`)
	wantStatus(t, r, 200)
	var order []string
	for _, it := range r.json(t)["identifiers"].([]any) {
		order = append(order, it.(map[string]any)["identifier"].(string))
	}
	if want := []string{"fact.sales.amount", "attr.stores.id", "dataset.sales"}; !reflect.DeepEqual(order, want) {
		t.Errorf("identifiers in order %v, want %v", order, want)
	}
	if u := r.json(t)["unknownIdentifiers"]; !reflect.DeepEqual(u, []any{"nope.one", "nope.two"}) {
		t.Errorf("unknownIdentifiers = %v", u)
	}

	x := newBrowser(t, w.b.URL, "ua")
	x.login("jane@example.com", "S3cret-pass")
	r = x.do("GET", "/svc/account/token", "")
	tt := false
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "SVCAuthTT" {
			tt = true
			if c.MaxAge != int(w.b.Config.Auth.TTLifetime/time.Second) {
				t.Errorf("TT cookie Max-Age %d, want %d", c.MaxAge, int(w.b.Config.Auth.TTLifetime/time.Second))
			}
		}
	}
	if !tt {
		t.Errorf("no TT cookie in %v", r.header)
	}

	r = w.admin.do("POST", "/svc/exporter/executor",
		`{"result_req":{"report":"/svc/md/`+w.pid+`/obj/`+strconv.Itoa(987654)+`","format":"CSV"}}`)
	if r.status != 404 {
		t.Errorf("export of a result that does not exist: %d %s, want 404", r.status, r.body)
	}
}

// TestMethodsAndContentTypes: a path with routes for other methods answers 405 with
// Allow; a JSON endpoint refuses a body declared as another type, or as nothing, with
// 415 naming the header, and takes one without a body whatever it declares; every
// answer carries nosniff.
func TestMethodsAndContentTypes(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	r := br.do("PUT", "/svc/projects/", `{}`)
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("PUT /svc/projects/: %d Allow %q, want 405 and POST", r.status, r.header.Get("Allow"))
	}
	r = br.do("PATCH", b.AdminProfile, `{}`)
	if r.status != 405 || r.header.Get("Allow") != "GET, HEAD, DELETE" || !strings.Contains(r.body, "PATCH") {
		t.Errorf("PATCH profile: %d Allow %q %s", r.status, r.header.Get("Allow"), r.body)
	}
	wantStatus(t, br.do("GET", "/svc/nothing/here", ""), 404)

	const project = `{"project":{"meta":{"title":"T"}}}`
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/csv"} {
		r := br.do("POST", "/svc/projects/", project, "Content-Type", ct)
		if r.status != 415 || !strings.Contains(r.body, "application/json") || !strings.Contains(r.body, `"Content-Type"`) {
			t.Errorf("Content-Type %q: %d %s, want 415 naming the header", ct, r.status, r.body)
		}
	}
	// A request without a body needs no type: send now and a channel's test post none.
	if r := br.do("POST", "/svc/projects/", "", "Content-Type", ""); r.status != 400 || !strings.Contains(r.body, "empty") {
		t.Errorf("no body and no Content-Type: %d %s, want 400 for the empty body", r.status, r.body)
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
		if r := br.do("POST", "/svc/projects/", project, "Content-Type", ct); r.status != 201 {
			t.Errorf("Content-Type %q: %d %s, want 201", ct, r.status, r.body)
		}
	}
	for _, r := range []reply{br.do("GET", b.AdminProfile, ""), br.do("GET", "/svc/nothing", ""), br.do("PUT", "/svc/projects/", "")} {
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%d answer without nosniff: %v", r.status, r.header)
		}
	}
}
