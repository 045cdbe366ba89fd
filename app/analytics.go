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
// them for its callers, each call made as the principal, and no request to
// the API.
type analyticsPort struct {
	md     *analytics.Service
	exec   *xtab.Executor
	export *export.Service
}

// EvaluateMetric executes the metric as a one-number report and waits for
// its value.
func (a analyticsPort) EvaluateMetric(ctx context.Context, p engine.Principal, metricURI string) (engine.Value, error) {
	def := analytics.ReportDefinitionContent{Format: grid.FormatOneNumber, Grid: analytics.Grid{
		Rows: []analytics.GridItem{}, Columns: []analytics.GridItem{{MetricGroup: true}},
		Metrics: []analytics.GridMetric{{URI: metricURI}}}}
	res, err := a.exec.Execute(ctx, p.Project, p.User, xtab.Source{Content: &def})
	if err != nil {
		return engine.Value{}, err
	}
	v := engine.Value{Null: true}
	if len(res.View.Metrics) > 0 {
		v.Format = res.View.Metrics[0].Format
	}
	g, err := a.exec.ResultGrid(ctx, p.Project, res.ID)
	if err != nil {
		return v, err
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
	var src xtab.Source
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

// objectID returns the id of an object URI of the project.
func objectID(pid, uri string) (int64, error) {
	rest, ok := strings.CutPrefix(uri, "/svc/md/"+pid+"/obj/")
	id, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, fmt.Errorf("%s is not an object URI of project %s", uri, pid)
	}
	return id, nil
}
