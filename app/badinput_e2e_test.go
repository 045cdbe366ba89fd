package app_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// TestBadInput sends malformed and invalid requests and checks each gets a
// 4xx with the reference error body naming what is wrong, and that nothing
// was stored.
func TestBadInput(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	project := admin.do("POST", "/svc/projects/", `{"project":{"content":{"guidedNavigation":1},"meta":{"title":"P","summary":""}}}`)
	wantStatus(t, project, 201)
	pid := project.json(t)["uri"].(string)
	users := "/svc/account/domains/default/users"
	user := func(fields string) string {
		return `{"accountSetting":{"login":"ann@example.com","password":"S3cret-pass","verifyPassword":"S3cret-pass","firstName":"Ann","lastName":"Lee"` + fields + `}}`
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		param                    string // the field path in parameters; "" when none
		message                  string // a substring of the message
	}{
		{"malformed JSON", "POST", "/svc/projects/", `{"project":`, 400, "", "Malformed JSON"},
		{"not an object", "POST", "/svc/projects/", `[1,2]`, 400, "(request body)", "must be an object"},
		{"empty body", "POST", "/svc/projects/", ``, 400, "", "empty"},
		{"trailing data", "POST", "/svc/projects/", `{"project":{"meta":{"title":"x"}}} {}`, 400, "", "unexpected data"},
		{"unknown field", "POST", "/svc/projects/", `{"project":{"meta":{"title":"x","colour":"red"}}}`, 400, "project.meta.colour", "Unknown field"},
		{"unknown root", "POST", "/svc/projects/", `{"projekt":{}}`, 400, "projekt", "Unknown field"},
		{"wrong type", "POST", "/svc/projects/", `{"project":{"meta":{"title":42}}}`, 400, "project.meta.title", "must be a string"},
		{"missing title", "POST", "/svc/projects/", `{"project":{"meta":{"summary":"x"}}}`, 400, "project.meta.title", "is required"},
		{"bad guidedNavigation", "POST", "/svc/projects/", `{"project":{"content":{"guidedNavigation":7},"meta":{"title":"x"}}}`, 400, "project.content.guidedNavigation", "0 or 1"},
		{"missing project", "POST", "/svc/projects/", `{}`, 400, "project", "is required"},
		{"login not e-mail", "POST", users, strings.Replace(user(""), "ann@example.com", "ann", 1), 400, "accountSetting.login", "e-mail"},
		{"weak password", "POST", users, strings.ReplaceAll(user(""), "S3cret-pass", "password"), 400, "accountSetting.password", "two of"},
		{"short password", "POST", users, strings.ReplaceAll(user(""), "S3cret-pass", "a1"), 400, "accountSetting.password", "at least 8"},
		{"password contains login", "POST", users, strings.ReplaceAll(user(""), "S3cret-pass", "ann-12345"), 400, "accountSetting.password", "login"},
		{"verify differs", "POST", users, strings.Replace(user(""), `"verifyPassword":"S3cret-pass"`, `"verifyPassword":"other-1234"`, 1), 400, "accountSetting.verifyPassword", "must equal"},
		{"missing first name", "POST", users, strings.Replace(user(""), `"firstName":"Ann"`, `"firstName":""`, 1), 400, "accountSetting.firstName", "is required"},
		{"bad timezone", "POST", users, user(`,"timezone":"Mars/Olympus"`), 400, "accountSetting.timezone", "IANA"},
		{"unknown user field", "POST", users, user(`,"isAdmin":true`), 400, "accountSetting.isAdmin", "Unknown field"},
		{"login: unknown field", "POST", "/svc/account/login", `{"postUserLogin":{"login":"a@b.c","password":"x","remember":0,"otp":"1"}}`, 400, "postUserLogin.otp", "Unknown field"},
		{"login: missing password", "POST", "/svc/account/login", `{"postUserLogin":{"login":"a@b.c"}}`, 400, "postUserLogin.password", "is required"},
		{"users: bad status", "POST", pid + "/users", `{"users":[{"user":{"content":{"status":"ON"},"links":{"self":"/svc/account/profile/x"}}}]}`, 400, "users[0].user.content.status", "ENABLED or DISABLED"},
		{"users: bad self", "POST", pid + "/users", `{"user":{"content":{"userRoles":["` + pid + `/roles/2"]},"links":{"self":"/svc/projects/x"}}}`, 400, "user.links.self", "profile URI"},
		{"users: foreign role", "POST", pid + "/users", `{"user":{"content":{"userRoles":["/svc/projects/other/roles/2"]},"links":{"self":"/svc/account/profile/x"}}}`, 400, "user.content.userRoles[0]", "role URI"},
		{"users: no roles", "POST", pid + "/users", `{"user":{"content":{"status":"ENABLED","userRoles":[]},"links":{"self":"/svc/account/profile/x"}}}`, 400, "user.content.userRoles", "at least one role"},
		{"users: neither form", "POST", pid + "/users", `{}`, 400, "user", "is required"},
		{"paging: bad offset", "GET", "/svc/account/domains/default/users?offset=-1", "", 400, "offset", "at least 0"},
		{"no such route", "GET", "/svc/nothing/here", "", 404, "/svc/nothing/here", "No resource"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := admin.do(tc.method, tc.path, tc.body)
			wantStatus(t, r, tc.status)
			e := r.errorBody(t)
			if e["requestId"] == "" || e["errorClass"] == "" || e["component"] == "" {
				t.Errorf("incomplete error body: %s", r.body)
			}
			params, _ := e["parameters"].([]any)
			if tc.param != "" && (len(params) == 0 || params[0] != tc.param) {
				t.Errorf("parameters = %v, want [%s ...]", params, tc.param)
			}
			if !strings.Contains(e["message"].(string), tc.message) {
				t.Errorf("message = %q, want it to contain %q", e["message"], tc.message)
			}
		})
	}
	// Nothing was half-applied: only the one project and the admin exist.
	r := admin.do("GET", "/svc/account/domains/default/users", "")
	if n := len(r.json(t)["accountSettings"].(map[string]any)["items"].([]any)); n != 1 {
		t.Errorf("%d users after bad requests, want 1", n)
	}
	r = admin.do("GET", b.AdminProfile+"/projects", "")
	if n := len(r.json(t)["projects"].([]any)); n != 1 {
		t.Errorf("%d projects after bad requests, want 1", n)
	}
}

func TestRequestLimitsAndCompatibility(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)

	big := `{"project":{"meta":{"title":"x","summary":"` + strings.Repeat("a", 2<<20) + `"}}}`
	r := admin.do("POST", "/svc/projects/", big)
	wantStatus(t, r, 413)

	// The platform's JS client sends captcha fields, remember as a number, and
	// a Content-Type on bodiless GETs; all are accepted.
	br := newBrowser(t, b.URL, "js")
	r = br.do("POST", "/svc/account/login", `{"postUserLogin":{"login":"`+b.Config.AdminLogin+`","password":"`+
		apptest.AdminPassword+`","remember":1,"captcha":"","verifyCaptcha":"","verify_level":2}}`,
		"X-GDC-VERSION", "2", "X-GDC-JS-PKG", "x")
	wantStatus(t, r, 200)

	// A client request id is echoed with the server's suffix.
	r = admin.do("GET", "/svc/projects/none", "", "X-Request-Id", "client-abc")
	if id := r.header.Get("X-Request-Id"); !strings.HasPrefix(id, "client-abc:") || len(id) <= len("client-abc:") {
		t.Errorf("X-Request-Id = %q", id)
	}
	if e := r.errorBody(t); e["requestId"] != r.header.Get("X-Request-Id") {
		t.Errorf("body requestId %v differs from header %q", e["requestId"], r.header.Get("X-Request-Id"))
	}
	// As the platform's Ruby and Java SDKs send theirs.
	r = admin.do("GET", "/svc/projects/none", "", "X-SVC-Request", "ruby-7f3a")
	if id := r.header.Get("X-Request-Id"); !strings.HasPrefix(id, "ruby-7f3a:") {
		t.Errorf("X-Request-Id after X-SVC-Request = %q", id)
	}
}

func TestAddingUnknownUserIsAFailedItem(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	pid := admin.do("POST", "/svc/projects/", `{"project":{"meta":{"title":"P"}}}`).json(t)["uri"].(string)
	r := admin.do("POST", pid+"/users", `{"user":{"content":{"status":"ENABLED","userRoles":["`+pid+`/roles/3"]},"links":{"self":"/svc/account/profile/nobody"}}}`)
	wantStatus(t, r, 200)
	res := r.json(t)["projectUsersUpdateResult"].(map[string]any)
	failed := res["failed"].([]any)
	if len(res["successful"].([]any)) != 0 || len(failed) != 1 {
		t.Fatalf("result = %v", res)
	}
	item := failed[0].(map[string]any)
	if item["user"] != "/svc/account/profile/nobody" || item["message"] != "Cannot add user to project. User doesn't exist" {
		t.Fatalf("failed item = %v", item)
	}
}

func TestDuplicateLogin(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	body := `{"accountSetting":{"login":"ann@example.com","password":"S3cret-pass","verifyPassword":"S3cret-pass","firstName":"Ann","lastName":"Lee"}}`
	wantStatus(t, admin.do("POST", "/svc/account/domains/default/users", body), 201)
	r := admin.do("POST", "/svc/account/domains/default/users", strings.Replace(body, "ann@", "ANN@", 1))
	wantStatus(t, r, 409)
	if e := r.errorBody(t); e["errorClass"] != "Conflict" {
		t.Errorf("error = %v", e)
	}
}
