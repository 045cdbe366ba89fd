package app_test

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// The platform's Ruby and Java SDKs on the model, metadata, execution, export and
// maintenance resources, replayed as in sdk_items_e2e_test.go.

// TestSDKExportTakesTheExecuteAnswer: both SDKs export the whole answer of an execution as
// result_req.result (report.rb:172-174, :163-165 at 0.6.27; ExportService.exportReport).
func TestSDKExportTakesTheExecuteAnswer(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	c := newSDK(t, b, javaSDK)
	c.connectForItem()
	// ExportService.executeReport: POST executor3 with {"report_req":{"report":uri}}, read as a JsonNode.
	answer := c.javaPlain(c.javaOK(c.java("POST", "/svc/xtab2/executor3", `{"report_req":{"report":"`+p.rept+`"}}`), "execute"))
	// ExportService.exportReport builds {"result_req":{"result":<answer>,"format":"csv"}}.
	r := c.javaOK(c.java("POST", "/svc/exporter/executor", map[string]any{"result_req": map[string]any{"result": answer, "format": "csv"}}), "export")
	uri, _ := c.javaPlain(r)["uri"].(string)
	if !strings.HasPrefix(uri, "/svc/exporter/result/"+p.pid+"/") {
		t.Fatalf("export answered %s", r)
	}
	c.javaPoll(uri)
	csv := c.javaOK(c.java("GET", uri, nil), "download")
	if !strings.Contains(string(csv.body), `"Downtown"`) || !strings.Contains(string(csv.body), "15.5") {
		t.Fatalf("CSV %s", csv.body)
	}
	// A result that is not an execution's answer names the field.
	if r := c.java("POST", "/svc/exporter/executor", `{"result_req":{"result":{"x":1},"format":"csv"}}`); r.status != 400 ||
		!strings.Contains(string(r.body), "result_req.result.reportResult2.meta.uri") {
		t.Fatalf("a wrong result: %s", r)
	}
}

// TestSDKWrappedDefinitionKeepsItsMeta: the Ruby SDK executes an unsaved definition as it
// records one, with meta.tags and meta.summary (report_definition.rb:155-176, :233-240).
func TestSDKWrappedDefinitionKeepsItsMeta(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	c := newSDK(t, b, ruby0627)
	c.connectForItem()
	def := map[string]any{"reportDefinition": map[string]any{
		"content": map[string]any{"grid": map[string]any{"sort": map[string]any{"columns": []any{}, "rows": []any{}},
			"columnWidths": []any{}, "columns": []any{}, "metrics": []any{map[string]any{"alias": "Amount", "uri": p.metric}},
			"rows": []any{"metricGroup"}}, "format": "grid", "filters": []any{}},
		"meta": map[string]any{"tags": "", "summary": "", "title": "Untitled report definition"}}}
	v := c.ruby("POST", "/svc/xtab2/executor3", map[string]any{"report_req": map[string]any{
		"definitionContent": map[string]any{"content": def, "projectMetadata": "/svc/md/" + p.pid}}})
	if at(v, "reportResult2", "meta", "uri") == nil {
		t.Fatalf("execution answered %v", v)
	}
}

// TestSDKProjectAndMetadataLinks: all twelve links of a project answer, the metadata root
// links objects, query, ldm and maintenance as the SDKs find them, and paths with a
// trailing slash reach their resources (project.rb:1345, md_object_query.rb:52,
// project.rb:1074-1078; ProjectService and Project.Links of the Java SDK).
func TestSDKProjectAndMetadataLinks(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	c := newSDK(t, b, rubyHead)
	c.connectForItem()
	project := c.ruby("GET", "/svc/projects/"+p.pid+"/", nil)
	links, _ := at(project, "project", "links").(map[string]any)
	for _, name := range []string{"roles", "ldm_thumbnail", "userPermissions", "userRoles", "connectors", "self",
		"invitations", "users", "ldm", "metadata", "publicartifacts", "templates"} {
		link, _ := links[name].(string)
		if link == "" {
			t.Errorf("the project has no %s link: %v", name, links)
			continue
		}
		r := c.rubyCall("GET", link, nil)
		if r.status != 200 {
			t.Errorf("%s = %s answers %s", name, link, r)
		}
		switch name {
		case "ldm":
			m := c.rubyRead(r)
			datasets := asList(at(m, "projectModel", "datasets"))
			if len(datasets) != 2 || at(asList(at(m, "projectModel", "dateDimensions"))[0], "dateDimension", "name") != "sold_on" {
				t.Errorf("ldm: %v", m)
			} else if sales := at(datasets[0], "dataset"); at(sales, "identifier") != "dataset.sales" ||
				at(sales, "anchor", "attribute", "identifier") != "attr.sales.id" || jsonString(at(sales, "references")) != `["dataset.stores","sold_on"]` {
				t.Errorf("ldm: dataset.sales is %v", sales)
			}
		case "ldm_thumbnail":
			if img, err := png.Decode(bytes.NewReader(r.body)); err != nil || r.header.Get("Content-Type") != "image/png" || img.Bounds().Dx() < 100 {
				t.Errorf("ldm_thumbnail: %v %q", err, r.header.Get("Content-Type"))
			}
		case "invitations":
			if at(c.rubyRead(r), "invitations") == nil { // project.rb:1319-1320 reads an array
				t.Errorf("invitations: %s", r.body)
			}
		}
	}
	md := c.ruby("GET", links["metadata"].(string), nil)
	byCategory := map[string]string{}
	for _, l := range asList(at(md, "about", "links")) {
		byCategory[at(l, "category").(string)], _ = at(l, "link").(string)
	}
	if byCategory["query"] != "/svc/md/"+p.pid+"/query" || byCategory["objects"] != "/svc/md/"+p.pid+"/objects" {
		t.Fatalf("metadata links %v", byCategory)
	}
	// md_object_query.rb:52 (:44 at 0.6.27): objects/query by category, a page of 50.
	objs := c.ruby("GET", query(byCategory["objects"]+"/query", "category", "report", "limit", "50", "offset", "0"), nil)
	items := asList(at(objs, "objects", "items"))
	if len(items) != 1 || at(items[0], "report", "meta", "uri") != p.rept || at(objs, "objects", "paging", "count") != 1.0 ||
		at(items[0], "report", "content", "definitions") == nil {
		t.Fatalf("objects/query: %v", objs)
	}
	// mandatory_user_filter.rb:53 builds query + "/<category>/".
	list := c.ruby("GET", byCategory["query"]+"/reports/", nil)
	if entries := asList(at(list, "query", "entries")); len(entries) != 1 || at(entries[0], "link") != p.rept {
		t.Fatalf("query/reports/: %v", list)
	}
	// project.rb:1074-1078: the ldm resource's ldm-manage2 link, then the task.
	var manage2 string
	for _, l := range asList(at(c.ruby("GET", byCategory["ldm"], nil), "about", "links")) {
		if at(l, "category") == "ldm-manage2" {
			manage2, _ = at(l, "link").(string)
		}
	}
	if manage2 == "" {
		t.Fatalf("no ldm-manage2 link under %s", byCategory["ldm"])
	}
	v := c.ruby("POST", manage2, map[string]any{"manage": map[string]any{"maql": `CREATE FOLDER {dim.more} VISUAL(TITLE "More") TYPE ATTRIBUTE;`}})
	task, _ := at(asList(at(v, "entries"))[0], "link").(string)
	done := c.rubyPoll(task, func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	if at(done, "wTaskStatus", "status") != "OK" {
		t.Fatalf("manage2: %v", done)
	}
}

// TestSDKValidateNamedChecks: the Ruby SDK validates with the platform's check names and
// polls asyncTask.link.poll (project.rb:2147-2152); the Java SDK posts the checks it read
// from availableValidations and reads the asyncTask alone (ProjectService.validateProject).
func TestSDKValidateNamedChecks(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	c := newSDK(t, b, rubyHead)
	c.connectForItem()
	v := c.ruby("POST", p.md+"/validate", map[string]any{"validateProject": []string{"ldm", "pdm", "metric_filter", "invalid_objects"}})
	poll, _ := at(v, "asyncTask", "link", "poll").(string)
	if poll == "" || at(v, "uri") != poll {
		t.Fatalf("validate answered %v", v)
	}
	res := c.rubyPoll(poll, func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	if at(res, "projectValidateResult", "error_found") != 0.0 || len(asList(at(res, "projectValidateResult", "results"))) != 2 {
		t.Fatalf("result %v", res)
	}
	j := newSDK(t, b, javaSDK)
	j.connectForItem()
	avail := j.javaPlain(j.javaOK(j.java("GET", p.md+"/validate", nil), "validations"))["availableValidations"]
	r := j.javaOK(j.java("POST", p.md+"/validate", map[string]any{"validateProject": avail}), "validate")
	task := j.javaWrapped(r, "asyncTask")
	j.javaPoll(at(task, "link", "poll").(string))
	final := j.javaWrapped(j.javaOK(j.java("GET", at(task, "link", "poll").(string), nil), "result"), "projectValidateResult")
	if final["error_found"] != 0.0 {
		t.Fatalf("java result %v", final)
	}
}

// TestSDKExecuteForms: v0.6.27 executes a report at executor3 and reads
// execResult.dataResult (report.rb:147 and :56-76 at 0.6.27); the head executes at
// /svc/projects/<pid>/execute (report.rb:152-157, report_definition.rb:226-244).
func TestSDKExecuteForms(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	old := newSDK(t, b, ruby0627)
	old.connectForItem()
	head := newSDK(t, b, rubyHead)
	head.connectForItem()
	for _, tc := range []struct {
		c    *sdkClient
		path string
		req  map[string]any
	}{
		{old, "/svc/xtab2/executor3", map[string]any{"report": p.rept}},
		{head, "/svc/projects/" + p.pid + "/execute", map[string]any{"report": p.rept}},
		{head, "/svc/projects/" + p.pid + "/execute", map[string]any{"reportDefinition": p.def}},
	} {
		v := tc.c.ruby("POST", tc.path, map[string]any{"report_req": tc.req})
		data, _ := at(v, "execResult", "dataResult").(string)
		if data == "" || at(v, "reportResult2", "meta", "uri") == nil {
			t.Fatalf("%s %s: %v", tc.c.kind, tc.path, v)
		}
		x := tc.c.rubyPoll(data, func(b any) bool { return at(b, "taskState", "status") == "WAIT" })
		if len(asList(at(x, "xtab_data", "data"))) != 2 {
			t.Fatalf("%s: data %v", tc.c.kind, x)
		}
	}
	other := newMD(t, b, admin)
	if r := head.send("POST", "/svc/projects/"+other.pid+"/execute", map[string]any{"report_req": map[string]any{"report": p.rept}}); r.status != 400 {
		t.Fatalf("a report of another project: %s", r)
	}
}

// TestSDKPartialImportTaskStatus: the Ruby SDKs poll a partial import and read
// wTaskStatus.status (project.rb:1482-1492, :959-969 at 0.6.27); the Java SDK polls it
// until 200 and reads a TaskStatus (ExportImportService.partialImport).
func TestSDKPartialImportTaskStatus(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	src := newSDKProject(t, b, admin)
	c := newSDK(t, b, rubyHead)
	c.connectForItem()
	export := func() string {
		v := c.ruby("POST", src.md+"/maintenance/partialmdexport", map[string]any{"partialMDExport": map[string]any{
			"uris": []string{src.rept}, "exportAttributeProperties": "1", "crossDataCenterExport": "1"}})
		c.rubyPoll(at(v, "partialMDArtifact", "status", "uri").(string), func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
		return at(v, "partialMDArtifact", "token").(string)
	}
	dst := newMD(t, b, admin)
	wantStatus(t, dst.manage(salesMAQL), 200)
	v := c.ruby("POST", dst.md+"/maintenance/partialmdimport", map[string]any{"partialMDImport": map[string]any{
		"token": export(), "overwriteNewer": "1", "updateLDMObjects": "1", "importAttributeProperties": "1"}})
	uri, _ := at(v, "uri").(string)
	res := c.rubyPoll(uri, func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	if at(res, "wTaskStatus", "status") != "OK" || at(res, "taskState", "status") != "OK" {
		t.Fatalf("partial import: %v", res)
	}
	j := newSDK(t, b, javaSDK)
	j.connectForItem()
	r := j.javaOK(j.java("POST", dst.md+"/maintenance/partialmdimport", map[string]any{"partialMDImport": map[string]any{
		"token": export(), "overwriteNewer": true, "updateLDMObjects": false, "importAttributeProperties": false}}), "import")
	status := j.javaWrapped(j.javaPoll(j.javaPlain(r)["uri"].(string)), "wTaskStatus")
	if status["status"] != "OK" {
		t.Fatalf("java: %v", status)
	}
}

// TestSDKDataResultWaits: while a data result computes, the answer says taskState WAIT,
// which the Ruby SDK polls on (report.rb:59-79, :56-76 at 0.6.27).
func TestSDKDataResultWaits(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	r := p.m.execute(map[string]any{"report": p.rept})
	wantStatus(t, r, 201)
	data := dig(r.json(t), "reportResult2", "content", "dataResult").(string)
	if status, _ := p.m.data(data); status != 200 {
		t.Fatalf("data: %d", status)
	}
	// The result's file goes missing: it is computed again, and meanwhile it waits.
	res, err := b.App.Store().ResultByID(context.Background(), data[strings.LastIndex(data, "/")+1:])
	if err != nil || os.Remove(res.Path) != nil {
		t.Fatalf("result %+v: %v", res, err)
	}
	c := newSDK(t, b, ruby0627)
	c.connectForItem()
	first := c.rubyCall("GET", data, nil)
	if first.status != http.StatusAccepted || at(c.rubyRead(first), "taskState", "status") != "WAIT" {
		t.Fatalf("while computing: %s", first)
	}
	x := c.rubyPoll(data, func(b any) bool { return at(b, "taskState", "status") == "WAIT" })
	if len(asList(at(x, "xtab_data", "data"))) != 2 {
		t.Fatalf("data %v", x)
	}
}

// TestSDKRawExport: the raw CSV export of the Java SDK (ExportService.exportCsv, :262-307)
// and of the Ruby SDK (report.rb:182-185, connection.rb:263-321).
func TestSDKRawExport(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	j := newSDK(t, b, javaSDK)
	j.connectForItem()
	r := j.javaOK(j.java("POST", "/svc/projects/"+p.pid+"/execute/raw", `{"report_req":{"report":"`+p.rept+`"}}`), "raw export")
	uri := j.javaPlain(r)["uri"].(string)
	j.javaPoll(uri)
	if csv := j.javaOK(j.java("GET", uri, nil), "download"); !strings.Contains(string(csv.body), `"Airport"`) {
		t.Fatalf("java raw CSV: %s", csv.body)
	}
	c := newSDK(t, b, rubyHead)
	c.connectForItem()
	v := c.ruby("POST", "/svc/app/projects/"+p.pid+"/execute/raw", map[string]any{"report_req": map[string]any{"report": p.rept}})
	if csv := c.rubyDownload(at(v, "uri").(string)); !strings.Contains(string(csv), `"Downtown"`) {
		t.Fatalf("ruby raw CSV: %s", csv)
	}
}

// TestSDKMetadataMaintenanceLink: v0.6.27 finds the partial export and import through the
// metadata root's maintenance link (project.rb:915-938, :948-969 at 0.6.27).
func TestSDKMetadataMaintenanceLink(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	c := newSDK(t, b, ruby0627)
	c.connectForItem()
	maintenance := ""
	for _, l := range asList(at(c.ruby("GET", p.md, nil), "about", "links")) {
		if at(l, "category") == "maintenance" {
			maintenance, _ = at(l, "link").(string)
		}
	}
	v := c.ruby("POST", maintenance+"/partialmdexport", map[string]any{"partialMDExport": map[string]any{"uris": []string{p.rept}}})
	res := c.rubyPoll(at(v, "partialMDArtifact", "status", "uri").(string), func(b any) bool { return at(b, "wTaskStatus", "status") == "RUNNING" })
	if at(res, "wTaskStatus", "status") != "OK" || at(v, "partialMDArtifact", "token") == "" {
		t.Fatalf("partial export: %v %v", v, res)
	}
	if r := c.rubyCall("GET", maintenance, nil); r.status != 200 {
		t.Fatalf("GET %s: %s", maintenance, r)
	}
}

// TestSDKProjectExportJavaDefaults: the Java SDK's default export carries excludeSchedules
// and crossDataCenterExport ("0" or "1", BooleanStringSerializer) and reads the
// exportArtifact and the taskState alone (ExportImportService.exportProject).
func TestSDKProjectExportJavaDefaults(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	p := newSDKProject(t, b, admin)
	j := newSDK(t, b, javaSDK)
	j.connectForItem()
	r := j.javaOK(j.java("POST", p.md+"/maintenance/export",
		`{"exportProject":{"exportUsers":"1","exportData":"1","excludeSchedules":"0","crossDataCenterExport":"0"}}`), "export")
	art := j.javaWrapped(r, "exportArtifact")
	var state map[string]any
	waitFor(t, func() bool {
		state = j.javaWrapped(j.javaOK(j.java("GET", at(art, "status", "uri").(string), nil), "poll"), "taskState")
		return state["status"] == "OK" || state["status"] == "ERROR"
	})
	if state["status"] != "OK" || art["token"] == "" {
		t.Fatalf("export: %v %v", art, state)
	}
}
