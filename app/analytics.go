package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/engine"
)

// analyticsPort is the engine's analytics port in process: the metadata
// service, the execution service and the exporter, called as the API calls
// them for its callers, each call made as the principal (over the slice of
// the data the engine read for it), and no request to the API.
type analyticsPort struct {
	md     *analytics.Service
	exec   *xtab.Executor
	export *export.Service
}

// EvaluateMetric computes the metric as a one-number report, in memory,
// and returns its value.
func (a analyticsPort) EvaluateMetric(ctx context.Context, p engine.Principal, metricURI string) (engine.Value, error) {
	def := analytics.ReportDefinitionContent{Format: grid.FormatOneNumber, Grid: analytics.Grid{
		Rows: []analytics.GridItem{}, Columns: []analytics.GridItem{{MetricGroup: true}},
		Metrics: []analytics.GridMetric{{URI: metricURI}}}}
	g, err := a.exec.Evaluate(ctx, p.Project, p.User, xtab.Source{Content: &def, Slice: sliceOf(p)})
	if err != nil {
		return engine.Value{}, err
	}
	v := engine.Value{Null: true}
	if len(g.Columns) > 0 {
		v.Format = g.Columns[0].Format
	}
	for row, err := range g.Rows {
		if err != nil {
			return v, err
		}
		if len(row.Values) > 0 && row.Values[0] != nil {
			v.Number, v.Null = *row.Values[0], false
		}
		break
	}
	return v, nil
}

// ExecuteReport executes a report, or a report definition, of the
// principal's project.
func (a analyticsPort) ExecuteReport(ctx context.Context, p engine.Principal, uri string) (engine.ReportResult, error) {
	id, err := objectID(p.Project, uri)
	if err != nil {
		return engine.ReportResult{}, err
	}
	o, err := a.md.Object(ctx, p.Project, id)
	if err != nil {
		return engine.ReportResult{}, err
	}
	src := xtab.Source{Slice: sliceOf(p)}
	switch o.Category {
	case analytics.CategoryReport:
		src.Report = uri
	case analytics.CategoryReportDefinition:
		src.Definition = uri
	default:
		return engine.ReportResult{}, fmt.Errorf("%s is neither a report nor a report definition", uri)
	}
	res, err := a.exec.Execute(ctx, p.Project, p.User, src)
	if err != nil {
		return engine.ReportResult{}, err
	}
	return engine.ReportResult{ID: res.ID, Title: res.View.ReportName, Chart: res.View.Format == grid.FormatChart}, nil
}

// ExportReport renders the result into w as it goes.
func (a analyticsPort) ExportReport(ctx context.Context, p engine.Principal, res engine.ReportResult, format string, w io.Writer) (engine.Export, error) {
	f, err := a.export.Write(ctx, p.Project, res.ID, format, w)
	if errors.Is(err, export.ErrEmpty) {
		return engine.Export{}, engine.ErrNoData
	}
	if err != nil {
		return engine.Export{}, err
	}
	return engine.Export{Name: f.Name, ContentType: f.ContentType}, nil
}

// UserFilters returns the slice of the project's data the user's mandatory
// user filters leave them.
func (a analyticsPort) UserFilters(ctx context.Context, project, user string) (engine.Filters, error) {
	sl, err := a.md.UserSlice(ctx, project, user)
	if err != nil {
		return engine.Filters{}, err
	}
	return engine.NewFilters(sl.Conditions()...), nil
}

// ProjectFilters returns the slices of the project's data the users with
// user filters see, by user id.
func (a analyticsPort) ProjectFilters(ctx context.Context, project string) (map[string]engine.Filters, error) {
	all, err := a.md.UserSlices(ctx, project)
	if err != nil {
		return nil, err
	}
	out := make(map[string]engine.Filters, len(all))
	for user, sl := range all {
		out[user] = engine.NewFilters(sl.Conditions()...)
	}
	return out, nil
}

// sliceOf is the slice of the data an execution as p sees: the filters the
// engine read for p, never the whole data by default.
func sliceOf(p engine.Principal) *analytics.Slice {
	sl := analytics.NewSlice(p.Filters.Conditions()...)
	return &sl
}

// objectID returns the id of an object URI of the project.
func objectID(pid, uri string) (int64, error) {
	rest, ok := strings.CutPrefix(uri, "/svc/md/"+pid+"/obj/")
	id, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, fmt.Errorf("%s is not an object URI of project %s", uri, pid)
	}
	return id, nil
}
