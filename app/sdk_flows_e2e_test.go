package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// The flows below are what a user of each SDK does from login to logout, each request
// as the SDK's code builds it and each answer read as the SDK reads it. The SDKs load
// data through the platform's WebDAV staging area, which Herald does not serve; the
// flows load their rows through Herald's data load, as its own browser helper does.

// expireTT moves the clock past the temporary token's life: the next call is challenged
// and the client renews its token and repeats the call.
func expireTT(b *apptest.Bundle, c *sdkClient) int {
	b.Clock.Advance(clockMinutes)
	return c.ttRequests
}

// rubyFlow is one run of a Ruby SDK from login to logout.
type rubyFlow struct {
	t                         *testing.T
	b                         *apptest.Bundle
	c                         *sdkClient
	data                      *browser // loads the rows, which the SDK would stage over WebDAV
	pid, userURI, def, report string
}

func startRubyFlow(t *testing.T, kind sdkKind) *rubyFlow {
	b := apptest.Start(t)
	f := &rubyFlow{t: t, b: b, c: newSDK(t, b, kind), data: newBrowser(t, b.URL, "ua-data")}
	f.data.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	f.c.rubyConnect(b.Config.AdminLogin, apptest.AdminPassword)
	return f
}

// usersAndProject: Domain.add_user (domain.rb:55-139; :37-112 at 0.6.27), Project.create,
// and the user added: at the head by Project#add_user with the login (set_user_roles,
// project.rb:2078-2087, resolve_roles :2174-2198), at 0.6.27 by set_users_roles through
// the users array (project.rb:1427-1459 at 0.6.27).
func (f *rubyFlow) usersAndProject() {
	c := f.c
	login := "ruby@example.com"
	account := map[string]any{"login": login, "firstName": "Ruby", "lastName": "Gem", "password": "S3cret-pass",
		"verifyPassword": "S3cret-pass", "email": login}
	if c.kind == rubyHead {
		account["language"] = "en-US"
	}
	f.userURI = at(c.ruby("POST", "/svc/account/domains/"+f.b.Config.Domain+"/users", map[string]any{"accountSetting": account}), "uri").(string)
	c.ruby("GET", f.userURI, nil)
	f.pid = c.rubyCreateProject("Sales")
	roles := c.rubyRoles(f.pid)
	var v any
	if c.kind == rubyHead {
		v = c.ruby("POST", "/svc/projects/"+f.pid+"/users", map[string]any{"user": map[string]any{
			"content": map[string]any{"status": "ENABLED", "userRoles": []string{roles["editorRole"]}},
			"links":   map[string]any{"self": "/svc/account/profile/" + login}}})
	} else {
		c.ruby("GET", query("/svc/projects/"+f.pid+"/users", "offset", "0", "limit", "1000"), nil)
		v = c.ruby("POST", "/svc/projects/"+f.pid+"/users", map[string]any{"users": []any{map[string]any{"user": map[string]any{
			"content": map[string]any{"status": "ENABLED", "userRoles": []string{roles["readOnlyUserRole"]}},
			"links":   map[string]any{"self": f.userURI}}}}})
	}
	if len(asList(at(v, "projectUsersUpdateResult", "failed"))) != 0 || len(asList(at(v, "projectUsersUpdateResult", "successful"))) != 1 {
		f.t.Fatalf("adding the user: %v", v)
	}
}

// model: the model in MAQL, the rows, and the metric, definition and report.
func (f *rubyFlow) model() {
	f.c.rubyExecuteMAQL(f.pid, salesMAQL)
	m := &mdClient{t: f.t, b: f.data, pid: f.pid, md: "/svc/md/" + f.pid}
	wantStatus(f.t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(f.t, m.load("dataset.sales", "full", salesCSV), 200)
	_, f.def, f.report = f.c.rubyReport(f.pid)
}

// validateAfterExpiry: the token expires, the validation is challenged, the token renewed
// and the call repeated; Project#validate (project.rb:2147-2153, :1475-1481 at 0.6.27).
func (f *rubyFlow) validateAfterExpiry() {
	c := f.c
	before := expireTT(f.b, c)
	res := c.ruby("POST", c.rubyMD(f.pid)["validate-project"], map[string]any{"validateProject": []string{"ldm", "pdm", "metric_filter", "invalid_objects"}})
	if c.ttRequests != before+1 {
		f.t.Fatalf("token requests after the expiry: %d", c.ttRequests-before)
	}
	res = c.rubyPoll(at(res, "asyncTask", "link", "poll").(string), func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	if at(res, "projectValidateResult", "error_found") != 0.0 {
		f.t.Fatalf("validate: %v", res)
	}
}

// executeAndExport: Report#execute (report.rb:149-158 at the head, at executor3 at 0.6.27,
// :145-149), an unsaved definition (report_definition.rb:226-244; :221-240 at 0.6.27),
// Report#export (report.rb:171-175; :162-166) and the raw export (Report#export_raw,
// report.rb:182-185; 0.6.27 has none: its user posts the platform's raw export and polls
// it as Report#export does).
func (f *rubyFlow) executeAndExport() {
	c, pid := f.c, f.pid
	execute, unsaved := "/svc/projects/"+pid+"/execute", "/svc/projects/"+pid+"/execute"
	if c.kind == ruby0627 {
		execute, unsaved = "/svc/xtab2/executor3", "/svc/app/projects/"+pid+"/execute"
	}
	req := map[string]any{"report_req": map[string]any{"report": f.report}}
	x := c.rubyDataResult(c.ruby("POST", execute, req))
	if data := asList(at(x, "xtab_data", "data")); len(data) != 1 || len(asList(data[0])) != 2 {
		f.t.Fatalf("xtab %v", x)
	}
	content := c.ruby("GET", f.def, nil)
	rd := at(content, "reportDefinition").(map[string]any)
	delete(rd, "links")
	rd["meta"] = map[string]any{"tags": "", "summary": "", "title": "Untitled report definition"}
	c.rubyDataResult(c.ruby("POST", unsaved, map[string]any{"report_req": map[string]any{
		"definitionContent": map[string]any{"content": content, "projectMetadata": "/svc/md/" + pid}}}))

	answer := c.ruby("POST", execute, req)
	exp := c.ruby("POST", "/svc/exporter/executor", map[string]any{"result_req": map[string]any{"format": "csv", "result": answer}})
	if csv := c.rubyPollCode(at(exp, "uri").(string)); csv.status != 200 || !strings.Contains(string(csv.body), `"Downtown"`) {
		f.t.Fatalf("export: %s", csv)
	}
	if c.kind == ruby0627 {
		raw := c.ruby("POST", "/svc/projects/"+pid+"/execute/raw", req)
		if csv := c.rubyPollCode(at(raw, "uri").(string)); csv.status != 200 || !strings.Contains(string(csv.body), `"Airport"`) {
			f.t.Fatalf("raw export: %s", csv)
		}
		return
	}
	raw := c.ruby("POST", "/svc/app/projects/"+pid+"/execute/raw", req)
	if csv := c.rubyDownload(at(raw, "uri").(string)); !strings.Contains(string(csv), `"Airport"`) {
		f.t.Fatalf("export_raw: %s", csv)
	}
}

// listingsAndChannels: Report.all (md_object_query.rb:38-60; :30-52 at 0.6.27), the
// spec's listing through the query link, and a channel: ChannelConfiguration.create at
// the head (channel_configuration.rb:45-91); 0.6.27 has no model of channels, its user
// posts the spec's body.
func (f *rubyFlow) listingsAndChannels() {
	c := f.c
	if reports := c.rubyObjects(f.pid, "report"); len(reports) != 1 || at(reports[0], "report", "meta", "uri") != f.report {
		f.t.Fatalf("Report.all: %v", reports)
	}
	if e := asList(at(c.ruby("GET", c.rubyMD(f.pid)["query"]+"/reports/", nil), "query", "entries")); len(e) != 1 || at(e[0], "link") != f.report {
		f.t.Fatalf("query/reports/: %v", e)
	}
	channels := c.auth["profile"].(string) + "/channelConfigurations"
	if c.kind == rubyHead {
		c.ruby("GET", channels, nil)
	}
	ch := c.ruby("POST", channels, map[string]any{"channelConfiguration": map[string]any{
		"configuration": map[string]any{"emailConfiguration": map[string]any{"to": f.b.Config.AdminLogin}},
		"meta":          map[string]any{"title": f.b.Config.AdminLogin}}})
	c.ruby("GET", at(ch, "channelConfiguration", "meta", "uri").(string), nil)
}

// partialAndClone: Project#objects_export and #objects_import (project.rb:1422-1500; at
// 0.6.27 through the maintenance link, :915-969) into a project of the same model, then
// Project#clone.
func (f *rubyFlow) partialAndClone() {
	c := f.c
	target := c.rubyCreateProject("Target")
	c.rubyExecuteMAQL(target, salesMAQL)
	export, imp := "/svc/md/"+f.pid+"/maintenance/partialmdexport", "/svc/md/"+target+"/maintenance/partialmdimport"
	exportBody := map[string]any{"uris": []string{f.report}, "exportAttributeProperties": "1", "crossDataCenterExport": "1"}
	importBody := map[string]any{"overwriteNewer": "1", "updateLDMObjects": "1", "importAttributeProperties": "1"}
	if c.kind == ruby0627 {
		export, imp = c.rubyMD(f.pid)["maintenance"]+"/partialmdexport", c.rubyMD(target)["maintenance"]+"/partialmdimport"
		exportBody = map[string]any{"uris": []string{f.report}}
		importBody = map[string]any{"overwriteNewer": "1", "updateLDMObjects": "0"}
	}
	pe := c.ruby("POST", export, map[string]any{"partialMDExport": exportBody})
	c.rubyPoll(at(pe, "partialMDArtifact", "status", "uri").(string), func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	importBody["token"] = at(pe, "partialMDArtifact", "token")
	pi := c.ruby("POST", imp, map[string]any{"partialMDImport": importBody})
	if res := c.rubyPoll(at(pi, "uri").(string), func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" }); at(res, "wTaskStatus", "status") != "OK" {
		f.t.Fatalf("objects_import: %v", res)
	}
	if reports := c.rubyObjects(target, "report"); len(reports) != 1 {
		f.t.Fatalf("imported reports: %v", reports)
	}
	if reports := c.rubyObjects(c.rubyClone(f.pid), "report"); len(reports) != 1 {
		f.t.Fatalf("cloned reports: %v", reports)
	}
}

// end: Profile#delete (profile.rb:201-203; :184-186 at 0.6.27), then
// Connection#disconnect; the login no longer works.
func (f *rubyFlow) end() {
	c := f.c
	c.ruby("DELETE", f.userURI, nil)
	c.rubyDisconnect()
	if r := c.send("GET", c.auth["profile"].(string), nil); r.status != http.StatusUnauthorized {
		f.t.Fatalf("after the logout: %s", r)
	}
}

func TestSDKFlowRubyHead(t *testing.T) {
	gate.Parallel(t)
	f := startRubyFlow(t, rubyHead)
	f.usersAndProject()
	f.model()
	f.validateAfterExpiry()
	f.executeAndExport()
	f.listingsAndChannels()
	f.partialAndClone()
	f.end()
}

func TestSDKFlowRuby0627(t *testing.T) {
	gate.Parallel(t)
	f := startRubyFlow(t, ruby0627)
	f.usersAndProject()
	f.model()
	f.validateAfterExpiry()
	f.executeAndExport()
	f.listingsAndChannels()
	f.partialAndClone()
	f.end()
}

// javaFlow is one run of the Java SDK from login to logout.
type javaFlow struct {
	t                                   *testing.T
	b                                   *apptest.Bundle
	c                                   *sdkClient
	data                                *browser
	meURI, accountURI, pid, def, report string
}

// javaProject is ProjectService.createProject: the Project as Jackson writes it, the
// answer's uri polled until the project is no longer preparing, and it must be enabled.
func (f *javaFlow) javaProject(title string) string {
	r := f.c.javaOK(f.c.java("POST", "/svc/projects", `{"project":{"content":{"authorizationToken":"tok","guidedNavigation":"1","driver":"Pg"},`+
		`"meta":{"title":"`+title+`","summary":"Java"}}}`), "createProject")
	uri := f.c.javaPlain(r)["uri"].(string)
	if project := f.c.javaWrapped(f.c.javaPoll(uri), "project"); at(project, "content", "state") != "ENABLED" {
		f.t.Fatalf("Created project %s is not enabled: %v", uri, project)
	}
	return lastPart(uri)
}

// javaModel is ModelService.updateProjectModel: ldm/manage2, its tasks-status link polled
// to 200 and read as a TaskStatus that must succeed.
func (f *javaFlow) javaModel(pid string) {
	r := f.c.javaOK(f.c.java("POST", "/svc/md/"+pid+"/ldm/manage2", map[string]any{"manage": map[string]any{"maql": salesMAQL}}), "updateProjectModel")
	var status string
	for _, e := range asList(f.c.javaPlain(r)["entries"]) {
		if at(e, "category") == "tasks-status" {
			status, _ = at(e, "link").(string)
		}
	}
	if at(f.c.javaWrapped(f.c.javaPoll(status), "wTaskStatus"), "status") != "OK" {
		f.t.Fatal("Unable to update project model")
	}
}

// loginAndUsers: AccountService.getCurrent (the first request is challenged, the client
// logs in with LoginSSTRetrievalStrategy, gets a TT and repeats it; the redirect is
// followed), createAccount, createProject, getRoles, addUserToProject and getUser.
func (f *javaFlow) loginAndUsers() {
	c := f.c
	me := c.javaWrapped(c.javaOK(c.java("GET", "/svc/account/profile/current", nil), "getCurrent"), "accountSetting")
	f.meURI, _ = at(me, "links", "self").(string)
	if c.sst == "" || c.ttRequests != 1 || f.meURI != f.b.AdminProfile {
		f.t.Fatalf("login: sst %q, token requests %d, %v", c.sst, c.ttRequests, me)
	}
	r := c.javaOK(c.java("POST", "/svc/account/domains/"+f.b.Config.Domain+"/users",
		`{"accountSetting":{"login":"java@example.com","email":"java@example.com","password":"S3cret-pass","verifyPassword":"S3cret-pass","firstName":"Java","lastName":"Sdk"}}`), "createAccount")
	f.accountURI = c.javaPlain(r)["uri"].(string)
	account := c.javaWrapped(c.javaOK(c.java("GET", "/svc/account/profile/"+lastPart(f.accountURI), nil), "getAccount"), "accountSetting")
	f.pid = f.javaProject("Sales")
	var editor string
	for _, uri := range asList(c.javaWrapped(c.javaOK(c.java("GET", "/svc/projects/"+f.pid+"/roles", nil), "getRoles"), "projectRoles")["roles"]) {
		if role := c.javaWrapped(c.javaOK(c.java("GET", uri.(string), nil), "getRole"), "projectRole"); at(role, "meta", "identifier") == "editorRole" {
			editor = uri.(string)
		}
	}
	// User(account, roles) in Users: {"users":[{"user":{"content":{"userRoles","status"},"links":{"self"}}}]}.
	r = c.javaOK(c.java("POST", "/svc/projects/"+f.pid+"/users", `{"users":[{"user":{"content":{"userRoles":["`+editor+
		`"],"status":"ENABLED"},"links":{"self":"`+at(account, "links", "self").(string)+`"}}}]}`), "addUserToProject")
	if failed := asList(c.javaWrapped(r, "projectUsersUpdateResult")["failed"]); len(failed) != 0 {
		f.t.Fatalf("Unable to update users: %v", failed)
	}
	c.javaWrapped(c.javaOK(c.java("GET", "/svc/projects/"+f.pid+"/users/"+lastPart(f.accountURI), nil), "getUser"), "user")
}

// modelAndObjects: the model, the rows, and MetadataService.createObj at
// obj?createAndGet=true&setIdentifier=true, which reads the object back.
func (f *javaFlow) modelAndObjects() {
	c := f.c
	f.javaModel(f.pid)
	m := &mdClient{t: f.t, b: f.data, pid: f.pid, md: "/svc/md/" + f.pid}
	wantStatus(f.t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(f.t, m.load("dataset.sales", "full", salesCSV), 200)
	ids := m.uris("fact.sales.amount", "label.stores.name")
	create := "/svc/md/" + f.pid + "/obj?createAndGet=true&setIdentifier=true"
	metric := c.javaWrapped(c.javaOK(c.java("POST", create, `{"metric":{"meta":{"title":"Amount"},"content":{"expression":"SELECT SUM([`+
		ids["fact.sales.amount"]+`])","format":"#,##0.00"}}}`), "createObj metric"), "metric")
	def := c.javaWrapped(c.javaOK(c.java("POST", create, `{"reportDefinition":{"content":{"grid":{"sort":{"columns":[],"rows":[]},"columnWidths":[],`+
		`"columns":["metricGroup"],"metrics":[{"alias":"","uri":"`+at(metric, "meta", "uri").(string)+`"}],"rows":[{"attribute":{"alias":"","totals":[[]],"uri":"`+
		ids["label.stores.name"]+`"}}]},"format":"grid","filters":[]},"meta":{"title":"Amount by store"}}}`), "createObj definition"), "reportDefinition")
	f.def = at(def, "meta", "uri").(string)
	rep := c.javaWrapped(c.javaOK(c.java("POST", create, `{"report":{"content":{"domains":[],"definitions":["`+f.def+
		`"]},"meta":{"title":"Amount by store"}}}`), "createObj report"), "report")
	f.report = at(rep, "meta", "uri").(string)
}

// validate is ProjectService.validateProject: the available checks, the asyncTask, the
// poll to 200, the result.
func (f *javaFlow) validate() {
	c := f.c
	avail := c.javaPlain(c.javaOK(c.java("GET", "/svc/md/"+f.pid+"/validate", nil), "validations"))["availableValidations"]
	task := c.javaWrapped(c.javaOK(c.java("POST", "/svc/md/"+f.pid+"/validate", map[string]any{"validateProject": avail}), "validateProject"), "asyncTask")
	poll := at(task, "link", "poll").(string)
	c.javaPoll(poll)
	if res := c.javaWrapped(c.javaOK(c.java("GET", poll, nil), "validation result"), "projectValidateResult"); res["error_found"] != 0.0 {
		f.t.Fatalf("validate: %v", res)
	}
}

// exportsAfterExpiry: the TT expires, and ExportService.export(report, CSV) (executor3,
// the exporter with the whole answer, polled, downloaded) renews it at its first request;
// then ExportService.exportCsv, the raw export.
func (f *javaFlow) exportsAfterExpiry() {
	c := f.c
	before := expireTT(f.b, c)
	answer := c.javaPlain(c.javaOK(c.java("POST", "/svc/xtab2/executor3", `{"report_req":{"report":"`+f.report+`"}}`), "executeReport"))
	if c.ttRequests != before+1 {
		f.t.Fatalf("token requests after the expiry: %d", c.ttRequests-before)
	}
	r := c.javaOK(c.java("POST", "/svc/exporter/executor", map[string]any{"result_req": map[string]any{"result": answer, "format": "csv"}}), "exportReport")
	uri := c.javaPlain(r)["uri"].(string)
	c.javaPoll(uri)
	if csv := c.javaOK(c.java("GET", uri, nil), "download"); !strings.Contains(string(csv.body), `"Downtown"`) {
		f.t.Fatalf("export: %s", csv.body)
	}
	r = c.javaOK(c.java("POST", "/svc/projects/"+f.pid+"/execute/raw", `{"report_req":{"report":"`+f.report+`"}}`), "exportCsv")
	uri = c.javaPlain(r)["uri"].(string)
	c.javaPoll(uri)
	if csv := c.javaOK(c.java("GET", uri, nil), "download"); !strings.Contains(string(csv.body), `"Airport"`) {
		f.t.Fatalf("raw export: %s", csv.body)
	}
}

// listingsAndChannels: MetadataService.find for Report and ReportDefinition, and
// NotificationService.createChannel and removeChannel.
func (f *javaFlow) listingsAndChannels() {
	c := f.c
	for q, want := range map[string]string{"reports": f.report, "reportdefinition": f.def} {
		entries := asList(c.javaWrapped(c.javaOK(c.java("GET", "/svc/md/"+f.pid+"/query/"+q, nil), "find"), "query")["entries"])
		if len(entries) != 1 || at(entries[0], "link") != want {
			f.t.Fatalf("find %s: %v", q, entries)
		}
	}
	ch := c.javaWrapped(c.javaOK(c.java("POST", f.meURI+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"`+f.b.Config.AdminLogin+`"}},"meta":{"title":"Mail"}}}`), "createChannel"), "channelConfiguration")
	c.javaOK(c.java("DELETE", at(ch, "meta", "uri").(string), nil), "removeChannel")
}

// partialAndClone: ExportImportService.partialExport and partialImport into a project of
// the same model; exportProject with ExportProject's defaults and importProject into a
// new project, a clone.
func (f *javaFlow) partialAndClone() {
	c := f.c
	target := f.javaProject("Target")
	f.javaModel(target)
	art := c.javaWrapped(c.javaOK(c.java("POST", "/svc/md/"+f.pid+"/maintenance/partialmdexport", `{"partialMDExport":{"uris":["`+f.report+`"]}}`), "partialExport"), "partialMDArtifact")
	if at(c.javaWrapped(c.javaPoll(at(art, "status", "uri").(string)), "wTaskStatus"), "status") != "OK" {
		f.t.Fatal("Partial metadata export failed")
	}
	r := c.javaOK(c.java("POST", "/svc/md/"+target+"/maintenance/partialmdimport", map[string]any{"partialMDImport": map[string]any{
		"token": art["token"], "overwriteNewer": true, "updateLDMObjects": false, "importAttributeProperties": false}}), "partialImport")
	if at(c.javaWrapped(c.javaPoll(c.javaPlain(r)["uri"].(string)), "wTaskStatus"), "status") != "OK" {
		f.t.Fatal("Partial metadata import failed")
	}
	clone := f.javaProject("Clone")
	exp := c.javaWrapped(c.javaOK(c.java("POST", "/svc/md/"+f.pid+"/maintenance/export",
		`{"exportProject":{"exportUsers":"1","exportData":"1","excludeSchedules":"0","crossDataCenterExport":"0"}}`), "exportProject"), "exportArtifact")
	javaTaskState(f.t, c, at(exp, "status", "uri").(string))
	r = c.javaOK(c.java("POST", "/svc/md/"+clone+"/maintenance/import", map[string]any{"importProject": map[string]any{"token": exp["token"]}}), "importProject")
	javaTaskState(f.t, c, c.javaPlain(r)["uri"].(string))
}

// end: AccountService.removeAccount, then logout: GoodDataHttpClient hands the DELETE of
// the login to LoginSSTRetrievalStrategy.logout (SST and TT headers, 204 required).
func (f *javaFlow) end() {
	c := f.c
	c.javaOK(c.java("DELETE", f.accountURI, nil), "removeAccount")
	me := c.javaWrapped(c.javaOK(c.java("GET", "/svc/account/profile/current", nil), "getCurrent"), "accountSetting")
	out := c.send("DELETE", "/svc/account/login/"+lastPart(at(me, "links", "self").(string)), nil, "Accept", "", "X-SVC-VERSION", "", "X-SVC-AuthSST", c.sst)
	if out.status != http.StatusNoContent {
		f.t.Fatalf("Logout unsuccessful using http: %s", out)
	}
	if r := c.send("GET", f.meURI, nil); r.status != http.StatusUnauthorized {
		f.t.Fatalf("after the logout: %s", r)
	}
}

func TestSDKFlowJava(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	f := &javaFlow{t: t, b: b, c: newSDK(t, b, javaSDK), data: newBrowser(t, b.URL, "ua-data")}
	f.data.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	f.loginAndUsers()
	f.modelAndObjects()
	f.validate()
	f.exportsAfterExpiry()
	f.listingsAndChannels()
	f.partialAndClone()
	f.end()
}

// lastPart is the last segment of a URI: the id of what it names.
func lastPart(uri string) string { return uri[strings.LastIndex(uri, "/")+1:] }
