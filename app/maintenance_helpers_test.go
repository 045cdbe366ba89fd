package app_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/client"
)

// etl polls an etltask until it is no longer RUNNING and returns its taskState. Every
// answer is 200.
func (m *mdClient) etl(uri string) map[string]any {
	m.t.Helper()
	var state map[string]any
	waitFor(m.t, func() bool {
		r := m.b.do("GET", uri, "")
		wantStatus(m.t, r, 200)
		state = r.json(m.t)["taskState"].(map[string]any)
		return state["status"] != "RUNNING"
	})
	return state
}

// status polls a wTaskStatus URI while it answers 202 and returns the last answer.
func (m *mdClient) status(uri string) reply {
	m.t.Helper()
	var r reply
	waitFor(m.t, func() bool {
		r = m.b.do("GET", uri, "")
		if r.status == 202 && (r.header.Get("Refresh") == "" || dig(r.json(m.t), "wTaskStatus", "status") != "RUNNING") {
			m.t.Fatalf("202 without Refresh or RUNNING: %v %s", r.header, r.body)
		}
		return r.status != 202
	})
	return r
}

// exportProject exports with the exportProject body and returns the token once the
// export is done.
func (m *mdClient) exportProject(body string) string {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/maintenance/export", `{"exportProject":`+body+`}`)
	wantStatus(m.t, r, 200)
	uri, _ := dig(r.json(m.t), "exportArtifact", "status", "uri").(string)
	token, _ := dig(r.json(m.t), "exportArtifact", "token").(string)
	if !strings.HasPrefix(uri, m.md+"/etltask/") || token == "" {
		m.t.Fatalf("export answered %s", r.body)
	}
	if state := m.etl(uri); state["status"] != "OK" {
		m.t.Fatalf("export %v", state)
	}
	return token
}

// importProject imports the token into the project and returns the finished taskState.
func (m *mdClient) importProject(token string) map[string]any {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/maintenance/import", jsonString(map[string]any{"importProject": map[string]any{"token": token}}))
	wantStatus(m.t, r, 200)
	uri, _ := r.json(m.t)["uri"].(string)
	if !strings.HasPrefix(uri, m.md+"/etltask/") {
		m.t.Fatalf("import answered %s", r.body)
	}
	return m.etl(uri)
}

// partialExport exports the objects and returns the token once the export is done.
func (m *mdClient) partialExport(uris ...string) string {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/maintenance/partialmdexport", jsonString(map[string]any{"partialMDExport": map[string]any{"uris": uris}}))
	wantStatus(m.t, r, 200)
	uri, _ := dig(r.json(m.t), "partialMDArtifact", "status", "uri").(string)
	token, _ := dig(r.json(m.t), "partialMDArtifact", "token").(string)
	if !strings.HasPrefix(uri, m.md+"/tasks/") || !strings.HasSuffix(uri, "/status") || token == "" {
		m.t.Fatalf("partial export answered %s", r.body)
	}
	if s := m.status(uri); s.status != 200 || dig(s.json(m.t), "wTaskStatus", "status") != "OK" {
		m.t.Fatalf("partial export: %d %s", s.status, s.body)
	}
	return token
}

// partialImport imports with the partialMDImport body and returns the finished taskState.
func (m *mdClient) partialImport(body string) map[string]any {
	m.t.Helper()
	r := m.b.do("POST", m.md+"/maintenance/partialmdimport", `{"partialMDImport":`+body+`}`)
	wantStatus(m.t, r, 200)
	return m.etl(r.json(m.t)["uri"].(string))
}

// objects returns the URIs of the project's reports, report definitions and metrics by
// category and identifier ("report report.x").
func (m *mdClient) objects() map[string]string {
	m.t.Helper()
	out := map[string]string{}
	for _, q := range []string{"reports", "reportdefinition", "metrics"} {
		for _, e := range m.get(m.md + "/query/" + q)["query"].(map[string]any)["entries"].([]any) {
			link := e.(map[string]any)["link"].(string)
			for category, obj := range m.get(link) {
				out[category+" "+dig(obj, "meta", "identifier").(string)] = link
			}
		}
	}
	return out
}

// sameReports executes every report of src and of dst, matched by identifier, and fails
// unless each gives the same xtab, both as the wire has it and as the Go client reads it.
// It returns how many reports it compared.
func sameReports(t *testing.T, c *client.Client, src, dst *mdClient) int {
	t.Helper()
	want, got := src.objects(), dst.objects()
	n := 0
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if !strings.HasPrefix(key, "report ") {
			continue
		}
		if got[key] == "" {
			t.Fatalf("%s is not in the imported project", key)
		}
		x1, x2 := src.run(map[string]any{"report": want[key]}), dst.run(map[string]any{"report": got[key]})
		if x1 == nil || len(x1.Data) == 0 {
			t.Fatalf("%s has no data", key)
		}
		if !reflect.DeepEqual(x1, x2) {
			a, _ := json.Marshal(x1)
			b, _ := json.Marshal(x2)
			t.Fatalf("%s:\nimported %s\nsource   %s", key, b, a)
		}
		ctx := context.Background()
		r1, err1 := c.ExecuteReport(ctx, want[key])
		r2, err2 := c.ExecuteReport(ctx, got[key])
		if err1 != nil || err2 != nil {
			t.Fatalf("execute %s: %v %v", key, err1, err2)
		}
		d1, err1 := c.DataResult(ctx, r1.Content.DataResult)
		d2, err2 := c.DataResult(ctx, r2.Content.DataResult)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(d1, d2) {
			t.Fatalf("client xtab of %s: %v %v\n%+v\n%+v", key, err1, err2, d1, d2)
		}
		n++
	}
	return n
}
