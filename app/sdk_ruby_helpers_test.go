package app_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The Ruby SDK's connection and the models a flow drives, as gooddata-ruby builds and
// reads them (see sdk_helpers_test.go).

// rubyOpt are the options a Ruby call passes; RestClient sends unknown options as headers
// (the cassettes show Dont-Reauth, Process and Tries).
type rubyOpt struct {
	dontReauth bool
	raw        bool // process: false
	headers    []string
}

// ruby makes a call as GoodData::Rest::Connection#request and #process_response do: on
// 401 or 403 it refreshes the TT and repeats (connection.rb:111, :134 at 0.6.27), it fails
// as RestClient raises on any other error, and it reads the answer by its Content-Type
// (connection.rb:612-638, :595-615 at 0.6.27). It returns the parsed JSON, the raw body
// (text, zip, CSV, or any body with raw), or nil for an empty answer.
func (c *sdkClient) ruby(method, path string, body any, opts ...rubyOpt) any {
	c.t.Helper()
	r := c.rubyCall(method, path, body, opts...)
	var o rubyOpt
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.raw {
		return r.body
	}
	return c.rubyRead(r)
}

// rubyCall is ruby without the reading: the reply after the refreshes.
func (c *sdkClient) rubyCall(method, path string, body any, opts ...rubyOpt) sdkReply {
	c.t.Helper()
	var o rubyOpt
	if len(opts) > 0 {
		o = opts[0]
	}
	tries := 14 // connection.rb:99, GD_MAX_RETRY
	if c.kind == ruby0627 {
		tries = 3 // connection.rb:588
	}
	for {
		r := c.send(method, path, body, o.headers...)
		if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
			if o.dontReauth {
				c.t.Fatalf("%s: %s %s raises %d: %s", c.kind, method, path, r.status, r.body)
			}
			c.refreshToken()
			if tries--; tries > 0 {
				continue
			}
		}
		if r.status >= 400 {
			c.t.Fatalf("%s: %s %s raises RestClient error %d: %s", c.kind, method, path, r.status, r.body)
		}
		if c.kind == rubyHead {
			c.mergeHeaders(r.header) // connection.rb:611
		}
		return r
	}
}

// rubyRead is process_response's reading of an answer by its Content-Type.
func (c *sdkClient) rubyRead(r sdkReply) any {
	c.t.Helper()
	ct := r.header.Get("Content-Type")
	if c.lenient && strings.HasPrefix(ct, "application/json") {
		ct = "application/json"
	}
	switch {
	case ct == "application/json" || ct == "application/json;charset=UTF-8":
		if string(r.body) == `""` {
			return map[string]any{}
		}
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil {
			c.t.Fatalf("%s: MultiJson cannot load %s", c.kind, r.body)
		}
		return v
	case ct == "text/plain;charset=UTF-8" || ct == "text/plain; charset=UTF-8" || ct == "text/plain" ||
		ct == "application/zip" || (ct == "text/csv" && c.kind == rubyHead):
		return r.body
	case r.header.Get("Content-Length") == "0":
		return nil
	case r.status == http.StatusNoContent:
		return nil
	case c.kind == rubyHead && r.status == http.StatusOK && ct == "" && len(r.body) == 0:
		return nil
	}
	c.t.Fatalf("%s: Unsupported response content type '%s':\n%.128s", c.kind, ct, r.body)
	return nil
}

// mergeHeaders keeps the tokens of an answer's headers (connection.rb:594).
func (c *sdkClient) mergeHeaders(h http.Header) {
	if v := h.Get("X-SVC-AuthSST"); v != "" {
		c.sst = v
	}
	if v := h.Get("X-SVC-AuthTT"); v != "" {
		c.tt = v
	}
}

// refreshToken is Connection#refresh_token: at the head a GET of the token resource with
// the SST header, reading userToken.token (connection.rb:323-331); at 0.6.27 the same GET
// with the cookies, keeping the new TT cookie (connection.rb:312).
func (c *sdkClient) refreshToken() {
	c.t.Helper()
	c.ttRequests++
	switch c.kind {
	case rubyHead:
		v := c.ruby("GET", "/svc/account/token", nil, rubyOpt{dontReauth: true,
			headers: []string{"X-SVC-AuthSST", c.sst, "Dont-Reauth", "true"}})
		tok, _ := at(v, "userToken", "token").(string)
		if tok == "" {
			c.t.Fatalf("ruby head: no userToken.token in %v", v)
		}
		c.tt = tok
	case ruby0627:
		c.ruby("GET", "/svc/account/token", nil, rubyOpt{dontReauth: true, headers: []string{"Dont-Reauth", "true"}})
		if c.cookies["SVCAuthTT"] == "" {
			c.t.Fatalf("ruby 0.6.27: no TT cookie after the token request")
		}
	}
}

// rubyConnect is Connection#connect with a login and a password (connection.rb:217-225,
// :207-215 at 0.6.27) and then Client.connect's user_webdav_path (client.rb:118, :106 at
// 0.6.27), which reads the uploads link of the service root (client.rb:413).
func (c *sdkClient) rubyConnect(login, password string) {
	c.t.Helper()
	c.javaLogin = [2]string{login, password}
	c.rubyLogin()
	if c.kind == rubyHead && c.sst == "" {
		c.t.Fatalf("ruby head: the login answer has no X-SVC-AuthSST header")
	}
	c.refreshToken()
	c.ttRequests = 0
	profile := c.ruby("GET", c.auth["profile"].(string), nil)
	if at(profile, "accountSetting", "login") == nil {
		c.t.Fatalf("%s: profile %v", c.kind, profile)
	}
	var uploads string
	for _, l := range asList(at(c.ruby("GET", "/svc", nil), "about", "links")) {
		if at(l, "category") == "uploads" {
			uploads, _ = at(l, "link").(string)
		}
	}
	if uploads == "" {
		c.t.Fatalf("%s: the service root has no uploads link", c.kind)
	}
}

// rubyLogin is the login of Connection#connect (connection.rb:219-221, :209-211 at
// 0.6.27).
func (c *sdkClient) rubyLogin() {
	c.t.Helper()
	payload := map[string]any{"postUserLogin": map[string]any{"login": c.javaLogin[0], "password": c.javaLogin[1], "remember": 1}}
	if c.kind == rubyHead {
		payload["postUserLogin"].(map[string]any)["verify_level"] = 2 // connection.rb:76-85
	}
	r := c.rubyCall("POST", "/svc/account/login", payload, rubyOpt{dontReauth: true, headers: []string{"Dont-Reauth", "true"}})
	c.loginCookies = (&http.Response{Header: r.header}).Cookies()
	c.auth, _ = at(c.rubyRead(r), "userLogin").(map[string]any)
	if c.auth == nil {
		c.t.Fatalf("%s: no userLogin in %s", c.kind, r)
	}
}

// rubyDownload is Connection#download of a URI with url_encode false
// (connection.rb:263-321): a GET with the User-Agent and the TT only, repeated while it
// answers 202, failing on anything but 200. It returns the body.
func (c *sdkClient) rubyDownload(uri string) []byte {
	c.t.Helper()
	var r sdkReply
	waitFor(c.t, func() bool {
		r = c.send("GET", uri, nil, "Accept", "", "Content-Type", "", "X-SVC-Request", "", "X-SVC-VERSION", "")
		return r.status != http.StatusAccepted
	})
	if r.status != http.StatusOK {
		c.t.Fatalf("ruby: ArgumentError: Error downloading %s. Got response: %s", uri, r)
	}
	return r.body
}

// rubyDisconnect is Connection#disconnect: DELETE of userLogin.state, with the SST header
// at the head (connection.rb:237-243, :227-233 at 0.6.27).
func (c *sdkClient) rubyDisconnect() {
	c.t.Helper()
	var extra []string
	if c.kind == rubyHead {
		extra = []string{"X-SVC-AuthSST", c.sst, "Tries", "0"}
	}
	c.ruby("DELETE", c.auth["state"].(string), nil, rubyOpt{headers: extra})
}

// rubyPoll is Client#poll_on_response (client.rb:341, :317 at 0.6.27): GET the link until
// the block says stop; it returns the last answer as read.
func (c *sdkClient) rubyPoll(link string, running func(any) bool) any {
	c.t.Helper()
	var v any
	waitFor(c.t, func() bool {
		v = c.ruby("GET", link, nil)
		return !running(v)
	})
	return v
}

// rubyPollCode is Client#poll_on_code with process: false (client.rb:317): GET the link
// while it answers 202, and return the last answer.
func (c *sdkClient) rubyPollCode(link string) sdkReply {
	c.t.Helper()
	var r sdkReply
	waitFor(c.t, func() bool {
		r = c.rubyCall("GET", link, nil, rubyOpt{headers: []string{"Process", "false"}})
		return r.status != http.StatusAccepted
	})
	return r
}

// rubyMD is a project's metadata root as GoodData::Links reads it (links.rb): the links
// by category.
func (c *sdkClient) rubyMD(pid string) map[string]string {
	c.t.Helper()
	project := c.ruby("GET", "/svc/projects/"+pid, nil) // Project[] (project.rb:83-96)
	md := map[string]string{}
	for _, l := range asList(at(c.ruby("GET", at(project, "project", "links", "metadata").(string), nil), "about", "links")) {
		md[at(l, "category").(string)], _ = at(l, "link").(string)
	}
	return md
}

// rubyCreateProject is Project.create (project.rb:114-168, :129-157 at 0.6.27): the
// project with the SDK's defaults, then GET until it is enabled.
func (c *sdkClient) rubyCreateProject(title string) string {
	c.t.Helper()
	body := map[string]any{"project": map[string]any{
		"meta":    map[string]any{"summary": "No summary", "title": title},
		"content": map[string]any{"guidedNavigation": 1, "driver": "Pg", "environment": "PRODUCTION", "authorizationToken": "tok"},
	}}
	v := c.ruby("POST", "/svc/projects", body) // Project#save (project.rb:1718-1731)
	uri, _ := at(v, "uri").(string)
	project := c.rubyPoll(uri, func(p any) bool {
		state, _ := at(p, "project", "content", "state").(string)
		if strings.EqualFold(state, "deleted") {
			c.t.Fatalf("%s: Project was marked as deleted during creation", c.kind)
		}
		return !strings.EqualFold(state, "enabled")
	})
	self, _ := at(project, "project", "links", "self").(string)
	return lastPart(self)
}

// rubyExecuteMAQL is Project#execute_maql (project.rb:1074-1090, :603-612 at 0.6.27):
// the ldm resource's ldm-manage2 link, the task, polled on wTaskStatus.
func (c *sdkClient) rubyExecuteMAQL(pid, maql string) {
	c.t.Helper()
	var manage string
	for _, l := range asList(at(c.ruby("GET", c.rubyMD(pid)["ldm"], nil), "about", "links")) {
		if at(l, "category") == "ldm-manage2" {
			manage, _ = at(l, "link").(string)
		}
	}
	v := c.ruby("POST", manage, map[string]any{"manage": map[string]any{"maql": maql}})
	task, _ := at(asList(at(v, "entries"))[0], "link").(string)
	res := c.rubyPoll(task, func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	if at(res, "wTaskStatus", "status") != "OK" {
		c.t.Fatalf("%s: MAQL failed: %v", c.kind, res)
	}
}

// rubySave is MdObject#save of a new object (metadata.rb:218-242, :183-207 at 0.6.27):
// POST to the md root's obj link, then GET of the answer's uri.
func (c *sdkClient) rubySave(pid string, obj map[string]any) string {
	c.t.Helper()
	v := c.ruby("POST", c.rubyMD(pid)["obj"], obj)
	uri, _ := at(v, "uri").(string)
	c.ruby("GET", uri, nil)
	return uri
}

// rubyObjects is MdObjectQuery#query (md_object_query.rb:38-60, :30-52 at 0.6.27): every
// object of a category, 50 at a time.
func (c *sdkClient) rubyObjects(pid, category string) []any {
	c.t.Helper()
	base := c.rubyMD(pid)["objects"] + "/query"
	var all []any
	for offset := 0; ; offset += 50 {
		v := c.ruby("GET", query(base, "category", category, "limit", "50", "offset", strconv.Itoa(offset)), nil)
		all = append(all, asList(at(v, "objects", "items"))...)
		if at(v, "objects", "paging", "count").(float64) < 50 {
			return all
		}
	}
}

// rubyIdentifier is MdIdToUri#identifier_to_uri (md_id_to_uri.rb): the md root's
// instance-identifiers link.
func (c *sdkClient) rubyIdentifier(pid, identifier string) string {
	c.t.Helper()
	v := c.ruby("POST", c.rubyMD(pid)["instance-identifiers"], map[string]any{"identifierToUri": []string{identifier}})
	uri, _ := at(asList(at(v, "identifiers"))[0], "uri").(string)
	return uri
}

// rubyReport makes the metric, definition and report of the sales model as the Ruby SDK
// does: Metric.create (metric.rb:39-94), ReportDefinition.create (report_definition.rb:
// 141-182) with the label in top and the metric in left, Report.create (report.rb:27-57).
func (c *sdkClient) rubyReport(pid string) (metric, def, report string) {
	c.t.Helper()
	var fact string
	for _, f := range c.rubyObjects(pid, "fact") {
		if at(f, "fact", "meta", "identifier") == "fact.sales.amount" {
			fact, _ = at(f, "fact", "meta", "uri").(string)
		}
	}
	label := c.rubyIdentifier(pid, "label.stores.name")
	metric = c.rubySave(pid, map[string]any{"metric": map[string]any{
		"content": map[string]any{"format": "#,##0.00", "expression": "SELECT SUM([" + fact + "])"},
		"meta":    map[string]any{"tags": "", "summary": nil, "title": "Amount"}}})
	def = c.rubySave(pid, map[string]any{"reportDefinition": map[string]any{
		"content": map[string]any{"grid": map[string]any{"sort": map[string]any{"columns": []any{}, "rows": []any{}},
			"columnWidths": []any{}, "columns": []any{map[string]any{"attribute": map[string]any{"alias": "", "totals": []any{}, "uri": label}}},
			"metrics": []any{map[string]any{"alias": "Amount", "uri": metric}}, "rows": []any{"metricGroup"}},
			"format": "grid", "filters": []any{}},
		"meta": map[string]any{"tags": "", "summary": "", "title": "Untitled report definition"}}})
	report = c.rubySave(pid, map[string]any{"report": map[string]any{
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}},
		"meta":    map[string]any{"tags": "", "deprecated": "0", "summary": "", "title": "Amount by store"}}})
	return metric, def, report
}

// rubyDataResult is Report.data_result (report.rb:59-80, :56-77 at 0.6.27): poll the
// execResult's dataResult while it says WAIT, and read the xtab.
func (c *sdkClient) rubyDataResult(answer any) any {
	c.t.Helper()
	uri, _ := at(answer, "execResult", "dataResult").(string)
	if uri == "" {
		c.t.Fatalf("%s: no execResult.dataResult in %v", c.kind, answer)
	}
	x := c.rubyPoll(uri, func(b any) bool { return at(b, "taskState", "status") == "WAIT" })
	if at(x, "xtab_data") == nil {
		c.t.Fatalf("%s: from_xtab of %v", c.kind, x)
	}
	return x
}

// rubyClone is Project#clone (project.rb:880-893, :441-455 at 0.6.27): a new project,
// export_clone polled on taskState, import_clone polled on taskState.
func (c *sdkClient) rubyClone(pid string) string {
	c.t.Helper()
	target := c.rubyCreateProject("Clone of Sales")
	v := c.ruby("POST", "/svc/md/"+pid+"/maintenance/export", map[string]any{"exportProject": map[string]any{"exportUsers": 0, "exportData": 1}})
	state := c.rubyPoll(at(v, "exportArtifact", "status", "uri").(string), func(b any) bool { return at(b, "taskState", "status") == "RUNNING" })
	if at(state, "taskState", "status") != "OK" { // ensure_clone_task_ok (project.rb:2361)
		c.t.Fatalf("%s: export %v", c.kind, state)
	}
	w := c.ruby("POST", "/svc/md/"+target+"/maintenance/import", map[string]any{"importProject": map[string]any{"token": at(v, "exportArtifact", "token")}})
	state = c.rubyPoll(at(w, "uri").(string), func(b any) bool { return at(b, "taskState", "status") == "RUNNING" })
	if at(state, "taskState", "status") != "OK" {
		c.t.Fatalf("%s: import %v", c.kind, state)
	}
	return target
}

// rubyRoles is Project#roles: the internal listing at the head (project.rb:1709-1716),
// every role of the listing at 0.6.27 (project.rb:1149-1157), each with its URI as
// ProjectRole#uri reads it.
func (c *sdkClient) rubyRoles(pid string) map[string]string {
	c.t.Helper()
	byIdentifier := map[string]string{}
	if c.kind == rubyHead {
		for _, r := range asList(at(c.ruby("GET", "/svc/internal/projects/"+pid+"/roles", nil), "internalProjectRoles", "roles")) {
			byIdentifier[at(r, "projectRole", "meta", "identifier").(string)], _ = at(r, "projectRole", "meta", "uri").(string)
		}
		return byIdentifier
	}
	for _, uri := range asList(at(c.ruby("GET", "/svc/projects/"+pid+"/roles", nil), "projectRoles", "roles")) {
		role := c.ruby("GET", uri.(string), nil)
		byIdentifier[at(role, "projectRole", "meta", "identifier").(string)], _ = at(role, "projectRole", "links", "self").(string)
	}
	return byIdentifier
}
