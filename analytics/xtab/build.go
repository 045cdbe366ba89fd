package xtab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/analytics/query"
)

// plan compiles a report definition over a slice of the data and lays it out.
func (e *Executor) plan(ctx context.Context, pid string, d definition, slice analytics.Slice) (*plan, error) {
	content := d.content
	var uris []string
	conds := slice.Conditions()
	sliced := make([]*maql.Filter, len(conds))
	for i, c := range conds {
		parsed, err := maql.ParseFilter(c)
		if err != nil {
			return nil, fmt.Errorf("data permission %q: %w", c, err)
		}
		sliced[i] = parsed
		for _, r := range parsed.Refs() {
			uris = append(uris, r.URI)
		}
	}
	filters := make([]*maql.Filter, len(content.Filters))
	for i, f := range content.Filters {
		parsed, err := maql.ParseFilter(f.Expression)
		if err != nil {
			return nil, d.fail(fmt.Sprintf("filters[%d].expression", i), err.Error())
		}
		filters[i] = parsed
		for _, r := range parsed.Refs() {
			uris = append(uris, r.URI)
		}
	}
	for _, it := range append(append([]analytics.GridItem{}, content.Grid.Rows...), content.Grid.Columns...) {
		if it.Attribute != nil {
			uris = append(uris, it.Attribute.URI)
		}
	}
	for _, m := range content.Grid.Metrics {
		uris = append(uris, m.URI)
	}
	cat, err := e.gather(ctx, pid, uris)
	if err != nil {
		return nil, err
	}
	model, err := e.md.Model(ctx, pid)
	if err != nil {
		return nil, err
	}
	req := &query.Request{Project: pid, Model: model, Objects: cat.objects, MaxSQL: e.cfg.MaxSQL}
	p := &plan{Definition: d.uri, Filters: []string{}, Slice: slice.Key()}
	p.Rows = layout(req, cat, content.Grid.Rows, "grid.rows")
	p.Columns = layout(req, cat, content.Grid.Columns, "grid.columns")
	if len(content.Grid.Metrics) > 0 && metricLevel(p.Rows) < 0 && metricLevel(p.Columns) < 0 {
		p.Columns = append(p.Columns, level{Metric: true})
	}
	for i, m := range content.Grid.Metrics {
		req.Metrics = append(req.Metrics, query.Part{URI: m.URI, Field: fmt.Sprintf("grid.metrics[%d].uri", i)})
		title := m.Alias
		if title == "" {
			title = cat.titles[m.URI]
		}
		p.Metrics = append(p.Metrics, Metric{URI: m.URI, Title: title, Format: cat.formats[m.URI]})
	}
	for i, f := range filters {
		req.Filters = append(req.Filters, query.Filter{Cond: f.Cond, Field: fmt.Sprintf("filters[%d].expression", i)})
		text, err := e.filterText(ctx, pid, cat, f.Cond)
		if err != nil {
			return nil, err
		}
		p.Filters = append(p.Filters, text)
	}
	own := len(req.Filters)
	for i, f := range sliced {
		req.Filters = append(req.Filters, query.Filter{Cond: f.Cond, Field: fmt.Sprintf("%s[%d]", slicedField, i)})
	}
	q, err := query.Compile(req)
	var qe *query.Error
	if errors.As(err, &qe) && len(sliced) > 0 {
		// When the report compiles without the slice, the user's data permissions and
		// the report do not meet: not the request's fault, and no data either way.
		alone := *req
		alone.Filters = req.Filters[:own]
		if _, aerr := query.Compile(&alone); aerr == nil || strings.HasPrefix(qe.Field, slicedField) {
			return nil, &analytics.InputError{Msg: "the data permissions of the user cannot be applied to this report: " + qe.Msg}
		}
	}
	if errors.As(err, &qe) {
		return nil, d.fail(qe.Field, qe.Msg)
	}
	if err != nil {
		return nil, err
	}
	if p.Args, err = argsOf(q.Args); err != nil {
		return nil, err
	}
	p.SQL, p.Attributes = q.SQL, q.Attributes
	for _, levels := range [][]level{p.Rows, p.Columns} {
		for i := range levels {
			levels[i].Date = !levels[i].Metric && q.Attributes[levels[i].Attr].DatePart != ""
		}
	}
	p.View, p.Chart = view(d, p), chartType(content.Chart)
	return p, nil
}

// slicedField names the conditions of the slice among the filters a query compiles.
const slicedField = "dataPermissions"

// layout turns grid items into header levels, adding their attributes to the request.
func layout(req *query.Request, cat *catalog, items []analytics.GridItem, field string) []level {
	out := []level{}
	for i, it := range items {
		if it.MetricGroup {
			out = append(out, level{Metric: true})
			continue
		}
		title := it.Attribute.Alias
		if title == "" {
			title = cat.titles[it.Attribute.URI]
		}
		out = append(out, level{Attr: len(req.Attributes), Title: title})
		req.Attributes = append(req.Attributes, query.Part{URI: it.Attribute.URI, Field: fmt.Sprintf("%s[%d].attribute.uri", field, i)})
	}
	return out
}

// fail is an error in the definition's content at field (relative to the content).
func (d definition) fail(field, msg string) error {
	if d.uri == "" {
		return &analytics.InputError{Field: d.field + "." + field, Msg: msg}
	}
	return &analytics.InputError{Field: d.field, Msg: fmt.Sprintf("report definition %s, content.%s: %s", d.uri, field, msg)}
}

// view is the report as the execution answer shows it.
func view(d definition, p *plan) View {
	title := d.title
	if title == "" {
		title = "Untitled report"
		if len(p.Metrics) == 1 && len(p.Attributes) == 0 {
			title = p.Metrics[0].Title
		}
	}
	v := View{ReportName: title, Format: d.content.Format, Metrics: p.Metrics,
		Rows: raw(d.content.Grid.Rows), Columns: raw(d.content.Grid.Columns), Filters: raw(d.content.Filters)}
	if v.Format == "" {
		v.Format = grid.FormatGrid
	}
	return v
}

func raw[T any](items []T) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		data, _ := json.Marshal(it) // grid items and filters always encode
		out = append(out, data)
	}
	return out
}

func chartType(chart json.RawMessage) string {
	var c struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(chart, &c) // checked when the definition was stored
	return c.Type
}
