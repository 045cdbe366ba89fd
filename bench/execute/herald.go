package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/bench/internal/revenue"
	"github.com/heraldhq/herald/client"
)

// herald is a Herald in this process with the sales project.
type herald struct {
	c      *client.Client
	url    string
	md     string // /svc/md/<pid>
	labels [2]string
	metric string
}

func startHerald(ctx context.Context, dir string) (*herald, func(), error) {
	b, stop, err := benchapp.Start(ctx, filepath.Join(dir, "herald"), nil, app.Options{})
	if err != nil {
		return nil, nil, err
	}
	return &herald{c: b.Client, url: b.App.URL()}, stop, nil
}

// load creates the project, its model, its data and the revenue metric.
func (h *herald) load(ctx context.Context, dir string) error {
	uri, err := h.c.CreateProject(ctx, "Execute bench", "")
	if err != nil {
		return err
	}
	h.md = "/svc/md/" + strings.TrimPrefix(uri, "/svc/projects/")
	if err := h.c.Do(ctx, "POST", h.md+"/ldm/manage", map[string]any{"manage": map[string]any{"maql": model}}, nil); err != nil {
		return err
	}
	for _, l := range []struct{ dataset, file string }{
		{"dataset.regions", "regions.csv"}, {"dataset.products", "products.csv"}, {"dataset.sales", "sales.csv"},
	} {
		if err := benchapp.PostCSVFile(ctx, h.c, h.url+h.md+"/datasets/"+l.dataset+"/data", filepath.Join(dir, l.file)); err != nil {
			return err
		}
	}
	var ids struct {
		Identifiers []struct{ Identifier, URI string } `json:"identifiers"`
	}
	err = h.c.Do(ctx, "POST", h.md+"/identifiers", map[string]any{"identifierToUri": []string{"label.regions.name", "label.products.name"}}, &ids)
	if err != nil {
		return err
	}
	for _, id := range ids.Identifiers {
		if id.Identifier == "label.regions.name" {
			h.labels[0] = id.URI
		} else {
			h.labels[1] = id.URI
		}
	}
	var out struct{ URI string }
	err = h.c.Do(ctx, "POST", h.md+"/obj", map[string]any{"metric": map[string]any{"meta": map[string]any{"title": "Revenue"},
		"content": map[string]any{"expression": "SELECT SUM({fact.sales.amount})"}}}, &out)
	h.metric = out.URI
	return err
}

// execution is what an execution through the API gave.
type execution struct {
	took time.Duration // from the request to the decoded rows
	rows revenue.Result
	uri  string // the data result's, which names the result the server computed or found
}

// execute runs the report through the API, with alias as the metric's title, and reads
// all its rows.
func (h *herald) execute(ctx context.Context, alias string) (execution, error) {
	def := map[string]any{"format": "grid", "grid": map[string]any{
		"rows": []any{
			map[string]any{"attribute": map[string]any{"uri": h.labels[0], "alias": ""}},
			map[string]any{"attribute": map[string]any{"uri": h.labels[1], "alias": ""}},
		},
		"columns": []any{"metricGroup"},
		"metrics": []any{map[string]any{"uri": h.metric, "alias": alias}},
	}}
	start := time.Now()
	var res struct {
		Result client.ReportResult `json:"reportResult2"`
	}
	err := h.c.Do(ctx, "POST", "/svc/xtab2/executor3", map[string]any{"report_req": map[string]any{
		"definitionContent": map[string]any{"content": def, "projectMetadata": h.md}}}, &res)
	if err != nil {
		return execution{}, err
	}
	e := execution{uri: res.Result.Content.DataResult}
	x, err := h.dataResult(ctx, e.uri)
	if err != nil {
		return execution{}, err
	}
	e.took = time.Since(start)
	e.rows, err = x.Result()
	return e, err
}

// dataResult reads a data result, all its rows in one page, once it is computed.
func (h *herald) dataResult(ctx context.Context, uri string) (*revenue.XTab, error) {
	for {
		var out page
		if err := h.c.Do(ctx, "GET", uri, nil, &out); err != nil {
			return nil, err
		}
		switch {
		case out.XTab != nil:
			return out.XTab, nil
		case out.URI == "":
			return nil, fmt.Errorf("%s: the result is empty", uri)
		}
	}
}

// page is a data result's answer: a page, or, while the result is still computing
// (202, after the server held the request a moment), its URI.
type page struct {
	XTab *revenue.XTab `json:"xtab_data"`
	URI  string        `json:"uri"`
}

// decodeTime reads a computed data result again and times decoding its answer as
// dataResult does.
func (h *herald) decodeTime(ctx context.Context, uri string) (time.Duration, error) {
	var body raw
	if err := h.c.Do(ctx, "GET", uri, nil, &body); err != nil {
		return 0, err
	}
	start := time.Now()
	var out page
	if err := json.Unmarshal(body, &out); err != nil {
		return 0, err
	}
	took := time.Since(start)
	if out.XTab == nil {
		return 0, fmt.Errorf("%s: no page: %.100s", uri, body)
	}
	return took, nil
}

// raw keeps a JSON answer as it came.
type raw []byte

func (r *raw) UnmarshalJSON(data []byte) error {
	*r = bytes.Clone(data)
	return nil
}
