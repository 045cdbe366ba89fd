package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/heraldhq/herald/bench/benchapp"
)

// bigReport creates a project of benchapp.SalesMAQL with rows generated
// sales in 100 stores and a report with one row per sale (order and store,
// and its amount), and returns the report's URI: a report whose files are
// large, unlike the demo's.
func bigReport(ctx context.Context, h *benchapp.Herald, rows int) string {
	c := h.Client
	uri, err := c.CreateProject(ctx, fmt.Sprintf("Report mail bench, %d rows", rows), "")
	if err != nil {
		log.Fatal(err)
	}
	md := "/svc/md/" + strings.TrimPrefix(uri, "/svc/projects/")
	if err := c.Do(ctx, "POST", md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": benchapp.SalesMAQL}}, nil); err != nil {
		log.Fatalf("model: %v", err)
	}
	var stores strings.Builder
	stores.WriteString("id,nm_name\n")
	for i := range 100 {
		fmt.Fprintf(&stores, "s%d,Store %d\n", i, i)
	}
	if _, err := benchapp.PostCSV(ctx, c, h.App.URL()+md+"/datasets/dataset.stores/data", strings.NewReader(stores.String())); err != nil {
		log.Fatalf("stores: %v", err)
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		fmt.Fprintln(w, "id,f_amount,stores_id,dt_sold_on_id")
		for i := range rows {
			fmt.Fprintf(w, "%d,%d.%02d,s%d,2024-%02d-%02d\n", i+1, (i*7919)%100_000, i%100, i%100, i%12+1, i%28+1)
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := benchapp.PostCSV(ctx, c, h.App.URL()+md+"/datasets/dataset.sales/data?mode=full", pr); err != nil {
		log.Fatalf("sales: %v", err)
	}
	var ids struct {
		Identifiers []struct{ Identifier, URI string } `json:"identifiers"`
	}
	if err := c.Do(ctx, "POST", md+"/identifiers", map[string]any{"identifierToUri": []string{"attr.sales.id", "label.stores.name"}}, &ids); err != nil {
		log.Fatal(err)
	}
	var rowsOf []any
	for _, id := range ids.Identifiers {
		rowsOf = append(rowsOf, map[string]any{"attribute": map[string]any{"uri": id.URI, "alias": ""}})
	}
	create := func(obj map[string]any) string {
		var out struct{ URI string }
		if err := c.Do(ctx, "POST", md+"/obj", obj, &out); err != nil {
			log.Fatal(err)
		}
		return out.URI
	}
	metric := create(map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Amount"},
		"content": map[string]any{"expression": "SELECT SUM({fact.sales.amount})", "format": "#,##0.00"}}})
	def := create(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Every sale"},
		"content": map[string]any{"format": "grid", "grid": map[string]any{"rows": rowsOf, "columns": []any{"metricGroup"},
			"metrics": []any{map[string]any{"uri": metric, "alias": ""}}}}}})
	return create(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Every sale"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}})
}
