package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/store"
)

// validate runs a validation through its URI and returns the projectValidateResult.
func (m *mdClient) validate(checks ...string) map[string]any {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/validate/", jsonString(map[string]any{"validateProject": checks}))
	wantStatus(m.t, r, 201)
	uri, _ := r.json(m.t)["uri"].(string)
	if !strings.HasPrefix(uri, m.md+"/validate/") || r.header.Get("Location") != uri {
		m.t.Fatalf("validate answered %v %s", r.header, r.body)
	}
	done := m.status(uri)
	wantStatus(m.t, done, 200)
	res, ok := done.json(m.t)["projectValidateResult"].(map[string]any)
	if !ok {
		m.t.Fatalf("validation ended with %s", done.body)
	}
	return res
}

// salesProject is a project with the sales model and data, and a report of the amount
// by store (report.amount, rd.amount, metric.amount).
func salesProject(t *testing.T, b *apptest.Bundle, admin *browser, sales string) (*mdClient, string) {
	t.Helper()
	m := newMD(t, b, admin)
	wantStatus(t, m.manage(salesMAQL), 200)
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", sales), 200)
	uris := m.uris("label.stores.name")
	metric := m.create(`{"metric":{"meta":{"title":"Amount","identifier":"metric.amount"},"content":{"expression":"SELECT SUM({fact.sales.amount})"}}}`)
	def := m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Amount by store", "identifier": "rd.amount"},
		"content": gridDef([]any{gridAttr(uris["label.stores.name"])}, []any{"metricGroup"}, []string{metric})}}))
	report := m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Amount by store", "identifier": "report.amount"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
	return m, report
}

func TestPartialMetadataRoundTrip(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin, c := adminOf(t, b.URL)
	src, report := salesProject(t, b, admin, salesCSV)
	token := src.partialExport(report)

	// A project with the same model and its own data.
	dst := newMD(t, b, admin)
	wantStatus(t, dst.manage(salesMAQL), 200)
	wantStatus(t, dst.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, dst.load("dataset.sales", "full", "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n7,100,s3,2024-05-01\n"), 200)
	if state := dst.partialImport(`{"token":"` + token + `"}`); state["status"] != "OK" || state["msg"] != "Created 3 objects, replaced 0" {
		t.Fatalf("import %v", state)
	}
	imported := dst.objects()["report report.amount"]
	if imported == "" || !strings.HasPrefix(imported, dst.md+"/obj/") {
		t.Fatalf("objects %v", dst.objects())
	}
	x := dst.run(map[string]any{"report": imported})
	if cells := x.cells(t); len(cells) != 1 || cells["Harbour|Amount"] != 100 {
		t.Fatalf("the imported report shows %v", cells)
	}
	res, err := c.ExecuteReport(context.Background(), imported)
	if err != nil || !strings.HasPrefix(res.Content.DataResult, dst.md+"/") {
		t.Fatalf("execute through the client: %+v %v", res, err)
	}

	// Into a project without the model: the first missing object is named.
	bare := newMD(t, b, admin)
	state := bare.partialImport(`{"token":"` + token + `","overwriteNewer":true,"updateLDMObjects":false}`)
	if msg, _ := state["msg"].(string); state["status"] != "ERROR" || !strings.HasPrefix(msg, "The object with uri ("+src.md+"/obj/") ||
		!strings.HasSuffix(msg, ") doesn't exists.") {
		t.Fatalf("import without the model: %v", state)
	}
	if state := dst.partialImport(`{"token":"nope"}`); state["status"] != "ERROR" || state["msg"] != "The token is not valid." {
		t.Fatalf("import of a bad token: %v", state)
	}

	// An export of a missing object fails in its status, with the error body.
	r := admin.do("POST", src.md+"/maintenance/partialmdexport", `{"partialMDExport":{"uris":["`+src.md+`/obj/999999"]}}`)
	wantStatus(t, r, 200)
	done := src.status(dig(r.json(t), "partialMDArtifact", "status", "uri").(string))
	wantStatus(t, done, 200)
	msgs := dig(done.json(t), "wTaskStatus", "messages").([]any)
	e := dig(msgs[0], "error").(map[string]any)
	if dig(done.json(t), "wTaskStatus", "status") != "ERROR" || e["message"] != "The object with uri (%s) doesn't exists." ||
		e["parameters"].([]any)[0] != src.md+"/obj/999999" || e["errorClass"] != "User" {
		t.Fatalf("status %s", done.body)
	}
}

func TestPartialImportOverwriteNewer(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin, _ := adminOf(t, b.URL)
	src, _ := salesProject(t, b, admin, salesCSV)
	token := src.partialExport(src.objects()["metric metric.amount"])

	b.Clock.Advance(time.Hour) // the target's metric is newer than the exported one
	wantStatus(t, admin.do("GET", "/svc/account/token", ""), 200)
	dst := newMD(t, b, admin)
	wantStatus(t, dst.manage(salesMAQL), 200)
	dst.create(`{"metric":{"meta":{"title":"Target's","identifier":"metric.amount"},"content":{"expression":"SELECT MAX({fact.sales.amount})"}}}`)
	title := func() string {
		return dig(dst.get(dst.objects()["metric metric.amount"]), "metric", "meta", "title").(string)
	}

	if state := dst.partialImport(`{"token":"` + token + `","overwriteNewer":false}`); state["status"] != "OK" ||
		state["msg"] != "Created 0 objects, replaced 0, kept 1 newer ones (metric.amount)" {
		t.Fatalf("import %v", state)
	}
	if got := title(); got != "Target's" {
		t.Fatalf("overwriteNewer false replaced the newer metric: %q", got)
	}
	// overwriteNewer is true unless said otherwise.
	if state := dst.partialImport(`{"token":"` + token + `"}`); state["status"] != "OK" {
		t.Fatalf("import %v", state)
	}
	if got := title(); got != "Amount" {
		t.Fatalf("the default kept the newer metric: %q", got)
	}
}

func TestPartialImportUpdateLDMObjects(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin, _ := adminOf(t, b.URL)
	src, _ := salesProject(t, b, admin, salesCSV)
	token := src.partialExport(src.objects()["metric metric.amount"])
	factTitle := func(m *mdClient) string {
		return dig(m.get(m.uris("fact.sales.amount")["fact.sales.amount"]), "fact", "meta", "title").(string)
	}
	for _, tc := range []struct {
		option, want string
	}{
		{``, "Sale Amount"},
		{`,"updateLDMObjects":false`, "Sale Amount"},
		{`,"updateLDMObjects":"1"`, "Amount"},
	} {
		t.Run(tc.option, func(t *testing.T) {
			dst := newMD(t, b, admin)
			wantStatus(t, dst.manage(strings.Replace(salesMAQL, `VISUAL(TITLE "Amount"`, `VISUAL(TITLE "Sale Amount"`, 1)), 200)
			if state := dst.partialImport(`{"token":"` + token + `"` + tc.option + `}`); state["status"] != "OK" {
				t.Fatalf("import %v", state)
			}
			if got := factTitle(dst); got != tc.want {
				t.Fatalf("fact title %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateEndpoint(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin, _ := adminOf(t, b.URL)
	m, _ := salesProject(t, b, admin, salesCSV)

	list := m.get(m.md + "/validate/")["projectValidateAvailable"].(map[string]any)
	if jsonString(list["availableValidations"]) != `["IO","LDM","PDM"]` {
		t.Fatalf("available validations %v", list)
	}
	res := m.validate("ldm", "PDM", "Io")
	var results []string
	for _, r := range res["results"].([]any) {
		results = append(results, dig(r, "from").(string))
		if n := dig(r, "body", "error"); n != 0.0 || len(dig(r, "body", "log").([]any)) != 0 {
			t.Fatalf("clean project: %v", r)
		}
	}
	if res["error_found"] != 0.0 || res["fatal_error_found"] != 0.0 || strings.Join(results, ",") != "ldm,pdm,io" ||
		dig(res, "meta", "start_time") == nil || dig(res, "meta", "finished_time") == nil {
		t.Fatalf("clean project: %v", res)
	}

	// A full load of the stores without s2 leaves a sale referencing nothing.
	wantStatus(t, m.load("dataset.stores", "full", "id,nm_name,nm_city\ns1,Downtown,Brno\ns3,Harbour,Brno\n"), 200)
	res = m.validate("IO")
	entry := dig(res["results"].([]any)[0], "body", "log").([]any)
	if res["error_found"] != 1.0 || len(entry) != 1 || dig(entry[0], "ecat") != "FOREIGN_KEY" || dig(entry[0], "level") != "ERROR" {
		t.Fatalf("broken references: %v", res)
	}
	pars, _ := json.Marshal(dig(entry[0], "pars"))
	if !strings.Contains(string(pars), `"common":"s2"`) || !strings.Contains(string(pars), `"name":"Sales"`) {
		t.Fatalf("pars %s", pars)
	}

	for _, body := range []string{`{"validateProject":["LDM","XYZ"]}`, `{"validateProject":[]}`, `{}`, `{"validateProject":"LDM"}`} {
		r := admin.do("POST", m.md+"/validate", body)
		if r.status != 400 || !strings.Contains(r.body, "validateProject") {
			t.Errorf("validate %s: %d %s", body, r.status, r.body)
		}
	}
	stranger := newBrowser(t, b.URL, "ua-s")
	b.NewUser(t, "s@x.io")
	stranger.loginWithToken("s@x.io", "S3cret-pass")
	if r := stranger.do("POST", m.md+"/validate/", `{"validateProject":["LDM"]}`); r.status != 404 {
		t.Fatalf("a stranger validated: %d %s", r.status, r.body)
	}
	// Only members poll the project's tasks.
	r := admin.do("POST", m.md+"/validate", `{"validateProject":["LDM"]}`)
	wantStatus(t, r, 201)
	uri := r.json(t)["uri"].(string)
	id := uri[strings.LastIndex(uri, "/")+1:]
	for _, path := range []string{uri, m.md + "/tasks/" + id + "/status", m.md + "/etltask/" + id} {
		if r := stranger.do("GET", path, ""); r.status != 404 {
			t.Errorf("a stranger polled %s: %d %s", path, r.status, r.body)
		}
		if r := admin.do("GET", path, ""); r.status != 200 && r.status != 202 {
			t.Errorf("a member polled %s: %d %s", path, r.status, r.body)
		}
	}
}

func TestRestartFailsTasksLeftRunning(t *testing.T) {
	gate.Parallel(t)
	dir := t.TempDir()
	a, out, stop := startDemo(t, dir)
	pid := demoProject.FindStringSubmatch(out.String())[1]
	md := "/svc/md/" + pid
	// Tasks that were running when the process went away.
	for id, kind := range map[string]string{"cutexport": "project.export", "cutvalidate": "validate"} {
		if err := a.Store().CreateTask(context.Background(), store.Task{ID: id, ProjectID: pid, Kind: kind, Status: store.TaskRunning,
			Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	admin, _ := adminOf(t, a.URL())
	running := []struct{ path, body string }{
		{md + "/tasks/cutexport/status", `{"wTaskStatus":{"links":{"poll":"` + md + `/tasks/cutexport/status"},"messages":[],"poll":"` + md + `/tasks/cutexport/status","status":"RUNNING"}}`},
		{md + "/validate/cutvalidate", `{"wTaskStatus":{"links":{"poll":"` + md + `/validate/cutvalidate"},"messages":[],"poll":"` + md + `/validate/cutvalidate","status":"RUNNING"}}`},
	}
	for _, tc := range running {
		r := admin.do("GET", tc.path, "")
		if r.status != 202 || r.header.Get("Refresh") != "1" || strings.TrimSpace(r.body) != tc.body {
			t.Fatalf("%s while running: %d %v %s", tc.path, r.status, r.header, r.body)
		}
	}
	if r := admin.do("GET", md+"/etltask/cutexport", ""); r.status != 200 || strings.TrimSpace(r.body) != `{"taskState":{"msg":"","status":"RUNNING"}}` {
		t.Fatalf("etltask while running: %d %s", r.status, r.body)
	}
	stop()

	a2, _, _ := startDemo(t, dir)
	admin, _ = adminOf(t, a2.URL())
	const cut = "The task was cut off: the service restarted before it finished."
	for _, path := range []string{md + "/tasks/cutexport/status", md + "/validate/cutvalidate"} {
		r := admin.do("GET", path, "")
		wantStatus(t, r, 200)
		msgs := dig(r.json(t), "wTaskStatus", "messages").([]any)
		if dig(r.json(t), "wTaskStatus", "status") != "ERROR" || len(msgs) != 1 || dig(msgs[0], "error", "message") != cut {
			t.Fatalf("%s after the restart: %s", path, r.body)
		}
	}
	if r := admin.do("GET", md+"/etltask/cutexport", ""); r.status != 200 ||
		strings.TrimSpace(r.body) != `{"taskState":{"msg":"`+cut+`","status":"ERROR"}}` {
		t.Fatalf("etltask after the restart: %d %s", r.status, r.body)
	}
	if r := admin.do("GET", md+"/etltask/nope", ""); r.status != 404 {
		t.Fatalf("unknown task: %d %s", r.status, r.body)
	}
}
