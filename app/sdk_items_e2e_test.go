package app_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// The platform's Ruby and Java SDKs, replayed request by request as their code builds
// them (sdk_helpers_test.go): each test here is one thing they need of Herald.

// TestSDKRubyReadsTheJSONContentType: both Ruby SDKs read a JSON answer only when its
// Content-Type is exactly application/json or application/json;charset=UTF-8
// (connection.rb:614, :598 at 0.6.27); YAML is still there for whoever asks for it.
func TestSDKRubyReadsTheJSONContentType(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	for _, kind := range []sdkKind{ruby0627, rubyHead} {
		c := newSDK(t, b, kind)
		// connection.rb:219-224 (:209-214 at 0.6.27): the login, a token, the profile.
		login := map[string]any{"login": b.Config.AdminLogin, "password": apptest.AdminPassword, "remember": 1}
		if kind == rubyHead {
			login["verify_level"] = 2
		}
		v := c.ruby("POST", "/svc/account/login", map[string]any{"postUserLogin": login}, rubyOpt{dontReauth: true})
		profile, _ := at(v, "userLogin", "profile").(string)
		if profile == "" {
			t.Fatalf("%s: login read as %v", kind, v)
		}
		if kind != ruby0627 {
			continue
		}
		c.refreshToken()
		if at(c.ruby("GET", profile, nil), "accountSetting", "login") != b.Config.AdminLogin {
			t.Fatalf("%s: the profile is not read", kind)
		}
		// An error body is JSON of the same type (connection.rb:495 parses it).
		if r := c.send("GET", "/svc/projects/none", nil); r.status != 404 || r.header.Get("Content-Type") != "application/json;charset=UTF-8" {
			t.Errorf("%s: error %s, Content-Type %q", kind, r, r.header.Get("Content-Type"))
		}
	}
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	r := br.do("GET", b.AdminProfile, "", "Accept", "application/yaml")
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/yaml") || !strings.Contains(r.body, "accountSetting:") {
		t.Errorf("YAML: %q %s", r.header.Get("Content-Type"), r.body)
	}
}

// TestSDKHeaderTokens: the current SDKs log in with verify_level 2 and carry the tokens in
// headers (connection.rb:76-85, :323-331; LoginSSTRetrievalStrategy, GoodDataHttpClient).
// The header tokens live as long as the cookies, are bound to the login's User-Agent, and
// end with the logout; the cookie login of the spec is as it was.
func TestSDKHeaderTokens(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	c := newSDK(t, b, rubyHead)
	r := c.send("POST", "/svc/account/login", map[string]any{"postUserLogin": map[string]any{
		"login": b.Config.AdminLogin, "password": apptest.AdminPassword, "remember": 1, "verify_level": 2}})
	if r.status != 200 || r.header.Get("X-SVC-AuthSST") == "" || r.header.Get("X-SVC-AuthTT") == "" {
		t.Fatalf("login with verify_level 2: %s, headers %v", r, r.header)
	}
	if cookieHeader(r.header, "SVCAuthSST") == "" {
		t.Errorf("a login with verify_level 2 sets no SVCAuthSST cookie: a browser that sends it would be logged out")
	}
	c.mergeHeaders(r.header)
	login := c.rubyRead(r)
	if at(login, "userLogin", "token") != c.sst || at(login, "userLogin", "state") == nil {
		t.Fatalf("userLogin %v, SST header %s", login, c.sst)
	}
	// The token resource answers the TT in userToken.token and in its header.
	r = c.send("GET", "/svc/account/token", nil, "X-SVC-AuthSST", c.sst)
	if r.status != 200 || r.header.Get("X-SVC-AuthTT") == "" || at(c.rubyRead(r), "userToken", "token") != r.header.Get("X-SVC-AuthTT") {
		t.Fatalf("token: %s %v", r, r.header)
	}
	c.tt = r.header.Get("X-SVC-AuthTT")
	state := at(login, "userLogin", "state").(string)
	profile := at(login, "userLogin", "profile").(string)
	if r := c.send("GET", profile, nil); r.status != 200 {
		t.Fatalf("with the TT header: %s", r)
	}
	// Expired: the challenge names the TT although no SST came with the request.
	b.Clock.Advance(clockMinutes)
	r = c.send("GET", profile, nil)
	if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "cookie=SVCAuthTT") {
		t.Fatalf("expired TT: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	old := c.tt
	if r := c.send("GET", "/svc/account/token", nil, "X-SVC-AuthSST", c.sst, "User-Agent", "", "User-Agent", "another"); r.status != 401 ||
		!strings.Contains(r.header.Get("WWW-Authenticate"), "cookie=SVCAuthSST") {
		t.Fatalf("a token for another User-Agent: %s", r)
	}
	if r := c.send("GET", profile, nil, "X-SVC-AuthTT", old); r.status != 401 {
		t.Fatalf("two expired TT headers: %s", r)
	}
	// The Java client repeats a request with the new TT added beside the expired one
	// (GoodDataHttpClient.cloneRequestWithNewTT).
	c.refreshToken()
	renewed := c.tt
	c.tt = old
	if r := c.send("GET", profile, nil, "X-SVC-AuthTT", renewed); r.status != 200 {
		t.Fatalf("old and new TT headers: %s", r)
	}
	c.tt = renewed
	// The logout ends the header tokens at once.
	if r := c.send("DELETE", state, nil, "X-SVC-AuthSST", c.sst); r.status != 204 {
		t.Fatalf("logout: %s", r)
	}
	if r := c.send("GET", profile, nil); r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "cookie=SVCAuthSST") {
		t.Fatalf("TT after logout: %d %v", r.status, r.header)
	}
	if r := c.send("GET", "/svc/account/token", nil, "X-SVC-AuthSST", c.sst); r.status != 401 {
		t.Fatalf("SST after logout: %s", r)
	}
	// The cookie login of the spec: no header tokens, an empty token answer.
	br := newBrowser(t, b.URL, "ua")
	r2 := br.login(b.Config.AdminLogin, apptest.AdminPassword)
	if r2.header.Get("X-SVC-AuthSST") != "" || strings.Contains(r2.body, "token") || cookieHeader(r2.header, "SVCAuthSST") == "" {
		t.Fatalf("cookie login: %v %s", r2.header, r2.body)
	}
	if r2 := br.do("GET", "/svc/account/token", ""); r2.status != 200 || r2.body != "" || r2.header.Get("X-SVC-AuthTT") != "" {
		t.Fatalf("cookie token: %d %q %v", r2.status, r2.body, r2.header)
	}
}

// TestSDKDomainUserEmailAndLanguage: the Ruby SDK creates a domain user with email and
// language (domain.rb:55-114), the Java SDK with email (Account, AccountService).
func TestSDKDomainUserEmailAndLanguage(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	c := newSDK(t, b, rubyHead)
	c.connectForItem()
	users := "/svc/account/domains/" + b.Config.Domain + "/users"
	v := c.ruby("POST", users, map[string]any{"accountSetting": map[string]any{"login": "ruby@example.com", "firstName": "Ruby",
		"lastName": "Gem", "password": "S3cret-pass", "verifyPassword": "S3cret-pass", "email": "ruby@example.com", "language": "en-US"}})
	uri, _ := at(v, "uri").(string)
	if at(c.ruby("GET", uri, nil), "accountSetting", "email") != "ruby@example.com" {
		t.Fatalf("created %v", v)
	}
	for field, body := range map[string]string{
		"accountSetting.email":    `{"accountSetting":{"login":"a@example.com","firstName":"A","lastName":"B","password":"S3cret-pass","verifyPassword":"S3cret-pass","email":"b@example.com"}}`,
		"accountSetting.language": `{"accountSetting":{"login":"a@example.com","firstName":"A","lastName":"B","password":"S3cret-pass","verifyPassword":"S3cret-pass","language":"<script>"}}`,
	} {
		if r := c.send("POST", users, body); r.status != 400 || !strings.Contains(string(r.body), field) {
			t.Errorf("%s: %s", field, r)
		}
	}
}

// TestSDKInternalRolesAndLoginURI: the Ruby SDK reads roles from the internal listing and
// names a user by a profile URI built from the login (project.rb:1709-1716, :2174-2198).
func TestSDKInternalRolesAndLoginURI(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	_, janeURI := b.NewUser(t, "jane@example.com")
	p := newMD(t, b, admin)
	c := newSDK(t, b, rubyHead)
	c.connectForItem()
	var editor string
	for _, r := range asList(at(c.ruby("GET", "/svc/internal/projects/"+p.pid+"/roles", nil), "internalProjectRoles", "roles")) {
		if at(r, "projectRole", "meta", "identifier") == "editorRole" {
			editor, _ = at(r, "projectRole", "meta", "uri").(string)
		}
	}
	if editor == "" {
		t.Fatal("no editorRole with meta.uri in the internal roles")
	}
	// project.rb:2078-2084, :2343-2355: set_user_roles with /account/profile/<login>.
	v := c.ruby("POST", "/svc/projects/"+p.pid+"/users", map[string]any{"user": map[string]any{
		"content": map[string]any{"status": "ENABLED", "userRoles": []string{editor}},
		"links":   map[string]any{"self": "/svc/account/profile/jane@example.com"}}})
	if failed := asList(at(v, "projectUsersUpdateResult", "failed")); len(failed) != 0 {
		t.Fatalf("failed: %v", failed)
	}
	for _, u := range asList(at(c.ruby("GET", query("/svc/projects/"+p.pid+"/users", "offset", "0", "limit", "1000"), nil), "users")) {
		if roles := asList(at(u, "user", "content", "userRoles")); at(u, "user", "links", "self") == janeURI && len(roles) == 1 && roles[0] == editor {
			return
		}
	}
	t.Fatalf("jane is not an editor of the project")
}

// TestSDKServiceRoot: both Ruby SDKs read the uploads link of GET /svc as they connect
// (client.rb:118, :298-306, :413-415; :106, :274-282, :384-386 at 0.6.27).
func TestSDKServiceRoot(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	for _, kind := range []sdkKind{rubyHead, ruby0627} {
		c := newSDK(t, b, kind)
		c.connectForItem()
		var uploads string
		for _, l := range asList(at(c.ruby("GET", "/svc", nil), "about", "links")) {
			if at(l, "category") == "uploads" {
				uploads, _ = at(l, "link").(string)
			}
		}
		if uploads == "" {
			t.Fatalf("%s: no uploads link in the service root", kind)
		}
		if r := c.rubyCall("GET", "/svc/", nil); r.status != 200 {
			t.Fatalf("%s: GET /svc/: %s", kind, r)
		}
	}
}

// TestSDKAddMembersInUsersArray: the SDKs add members through the users array
// (project.rb:2094-2128, :1427-1459 at 0.6.27; ProjectService.addUserToProject, which
// then reads the member at /svc/projects/<pid>/users/<uid>).
func TestSDKAddMembersInUsersArray(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	_, annURI := b.NewUser(t, "ann@example.com")
	_, bobURI := b.NewUser(t, "bob@example.com")
	p := newMD(t, b, admin)
	viewer := "/svc/projects/" + p.pid + "/roles/3"
	c := newSDK(t, b, ruby0627)
	c.connectForItem()
	v := c.ruby("POST", "/svc/projects/"+p.pid+"/users", map[string]any{"users": []any{map[string]any{"user": map[string]any{
		"content": map[string]any{"status": "ENABLED", "userRoles": []string{viewer}}, "links": map[string]any{"self": annURI}}}}})
	if s := asList(at(v, "projectUsersUpdateResult", "successful")); len(s) != 1 || s[0] != annURI {
		t.Fatalf("ruby: %v", v)
	}
	j := newSDK(t, b, javaSDK)
	j.connectForItem()
	// User(account, roles) serialized by Users: {"users":[{"user":{"content":{"userRoles","status"},"links":{"self"}}}]}.
	r := j.javaOK(j.java("POST", "/svc/projects/"+p.pid+"/users", `{"users":[{"user":{"content":{"userRoles":["`+viewer+
		`"],"status":"ENABLED"},"links":{"self":"`+bobURI+`"}}}]}`), "add user")
	if failed := asList(j.javaWrapped(r, "projectUsersUpdateResult")["failed"]); len(failed) != 0 {
		t.Fatalf("java failed: %v", failed)
	}
	u := j.javaWrapped(j.javaOK(j.java("GET", "/svc/projects/"+p.pid+"/users/"+uid(bobURI), nil), "get user"), "user")
	if at(u, "content", "status") != "ENABLED" || at(u, "links", "self") != bobURI {
		t.Fatalf("java user %v", u)
	}
	// A status change of someone who is not a member still fails.
	_, carlURI := b.NewUser(t, "carl@example.com")
	v = c.ruby("POST", "/svc/projects/"+p.pid+"/users", map[string]any{"users": []any{map[string]any{"user": map[string]any{
		"content": map[string]any{"status": "DISABLED"}, "links": map[string]any{"self": carlURI}}}}})
	if f := asList(at(v, "projectUsersUpdateResult", "failed")); len(f) != 1 {
		t.Fatalf("disabling a non-member: %v", v)
	}
}

// TestSDKRoleLinks: v0.6.27 reads a role's URI and members from projectRole.links
// (project_role.rb at 0.6.27: #uri, #users); the Java SDK reads Role and its self link.
func TestSDKRoleLinks(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newMD(t, b, admin)
	c := newSDK(t, b, ruby0627)
	c.connectForItem()
	// project.rb:1149-1157 at 0.6.27.
	for _, uri := range asList(at(c.ruby("GET", "/svc/projects/"+p.pid+"/roles", nil), "projectRoles", "roles")) {
		role := c.ruby("GET", uri.(string), nil)
		if at(role, "projectRole", "links", "self") != uri {
			t.Fatalf("role %s: %v", uri, role)
		}
		users := c.ruby("GET", at(role, "projectRole", "links", "roleUsers").(string), nil)
		list := asList(at(users, "associatedUsers", "users"))
		if isAdmin := at(role, "projectRole", "meta", "identifier") == "adminRole"; isAdmin != (len(list) == 1 && list[0] == b.AdminProfile) {
			t.Fatalf("members of %s: %v", uri, users)
		}
	}
}
