package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/client"
)

// timing is one pass of the whole path, each moment since the execute
// request was sent.
type timing struct {
	executed time.Duration // executor3 answered
	accepted time.Duration // the exporter answered with the URI to poll
	ready    time.Duration // the poll answered 200: the file is rendered
	written  time.Duration // the file is fully written and closed on disk
	polls    int           // GETs answered 202
	size     int64
	// dataResult names the result the execution was answered with, which
	// equal executions share: it tells a cached execution from a new one.
	dataResult string
}

// definition is the report of a file as an inline definition: the regions and
// customers by the three metrics, or a bar chart of the regions alone. alias
// renames the first metric, and so makes an execution differ from another.
func (p *project) definition(f file, alias string) map[string]any {
	rows := []any{
		map[string]any{"attribute": map[string]any{"uri": p.labels[0], "alias": ""}},
		map[string]any{"attribute": map[string]any{"uri": p.labels[1], "alias": ""}},
	}
	format, title := "grid", "Orders by region and customer"
	if f.format == render.FormatPNG {
		rows, format, title = rows[:1], "chart", "Orders by region"
	}
	ms := make([]any, len(p.metrics))
	for i, uri := range p.metrics {
		ms[i] = map[string]any{"uri": uri, "alias": ""}
	}
	ms[0] = map[string]any{"uri": p.metrics[0], "alias": alias}
	content := map[string]any{"format": format, "filters": []any{},
		"grid": map[string]any{"rows": rows, "columns": []any{"metricGroup"}, "metrics": ms}}
	if format == "chart" {
		content["chart"] = map[string]any{"type": "bar"}
	}
	return map[string]any{"reportDefinition": map[string]any{"content": content, "meta": map[string]any{"title": title}}}
}

// wholePath executes the file's report, exports the result, polls the export
// every poll until it is rendered, and writes the file it downloads to path. A
// poll of zero waits between polls as the client package does.
func (h *herald) wholePath(ctx context.Context, p *project, f file, alias, path string, poll time.Duration) (timing, error) {
	var t timing
	start := time.Now()
	var res struct {
		Result client.ReportResult `json:"reportResult2"`
	}
	err := h.c.Do(ctx, "POST", "/svc/xtab2/executor3", map[string]any{"report_req": map[string]any{
		"definitionContent": map[string]any{"content": p.definition(f, alias), "projectMetadata": p.md}}}, &res)
	if err != nil {
		return t, fmt.Errorf("execute: %w", err)
	}
	t.executed, t.dataResult = time.Since(start), res.Result.Content.DataResult
	var started struct {
		URI string `json:"uri"`
	}
	err = h.c.Do(ctx, "POST", "/svc/exporter/executor", map[string]any{"result_req": map[string]any{
		"report": res.Result.Meta.URI, "format": f.format}}, &started)
	if err != nil {
		return t, fmt.Errorf("export: %w", err)
	}
	t.accepted = time.Since(start)
	wait := poll
	if poll <= 0 {
		wait = clientFirstWait
	}
	for {
		done, err := h.download(ctx, started.URI, path, start, &t)
		if err != nil || done {
			return t, err
		}
		t.polls++
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(wait):
		}
		if poll <= 0 {
			wait = min(2*wait, clientMaxWait)
		}
	}
}

// The waits between polls of the client package (client.Export): the first,
// doubled after each poll up to the export's Refresh header of one second.
const (
	clientFirstWait = 2 * time.Millisecond
	clientMaxWait   = time.Second
)

// download GETs an export once: false while it is rendering; once it is
// rendered, the file written to path and true.
func (h *herald) download(ctx context.Context, uri, path string, start time.Time, t *timing) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url+uri, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("User-Agent", "bench")
	resp, err := h.c.HTTPClient().Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusAccepted:
		_, err := io.Copy(io.Discard, resp.Body)
		return false, err
	case http.StatusOK:
	default:
		body, _ := io.ReadAll(resp.Body)
		return false, fmt.Errorf("GET %s: %d %s", uri, resp.StatusCode, body)
	}
	t.ready = time.Since(start)
	out, err := os.Create(path)
	if err != nil {
		return false, err
	}
	t.size, err = io.Copy(out, resp.Body)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	t.written = time.Since(start)
	return true, err
}

// execution executes the file's report and waits until its result is
// computed, reading one cell of it: the query and the result file, without
// the export.
func (h *herald) execution(ctx context.Context, p *project, f file, alias string) (time.Duration, string, error) {
	start := time.Now()
	var res struct {
		Result client.ReportResult `json:"reportResult2"`
	}
	err := h.c.Do(ctx, "POST", "/svc/xtab2/executor3", map[string]any{"report_req": map[string]any{
		"definitionContent": map[string]any{"content": p.definition(f, alias), "projectMetadata": p.md}}}, &res)
	if err != nil {
		return 0, "", fmt.Errorf("execute: %w", err)
	}
	x, err := h.c.DataResult(ctx, res.Result.Content.DataResult+"?offset=0,0;size=1,1")
	if err != nil {
		return 0, "", fmt.Errorf("data result: %w", err)
	}
	if x == nil || x.OverallSize.Rows != f.rows {
		return 0, "", fmt.Errorf("data result: not %d rows", f.rows)
	}
	return time.Since(start), res.Result.Content.DataResult, nil
}
