package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/engine"
)

// dayZero is the day before the first day of the date dimension: element
// ids of its date attribute count days from it.
var dayZero = time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)

// ExecuteReportAfter executes the report's definition with one filter more,
// the date attribute attr after day after (none when after is 0), and finds
// the latest day among the rows it keeps: the same metrics by that date,
// under the same filters.
func (a analyticsPort) ExecuteReportAfter(ctx context.Context, p engine.Principal, uri, attr string, after int64) (engine.ReportResult, int64, error) {
	title, c, err := reportDefinition(ctx, a.md, p.Project, uri)
	if err != nil {
		return engine.ReportResult{}, 0, err
	}
	if after > 0 {
		c.Filters = append(c.Filters, analytics.Filter{Expression: fmt.Sprintf("[%s] > %d", attr, after)})
	}
	res, err := a.exec.Execute(ctx, p.Project, p.User, xtab.Source{Content: &c, Title: title, Slice: sliceOf(p)})
	if err != nil {
		return engine.ReportResult{}, 0, err
	}
	out := engine.ReportResult{ID: res.ID, Title: res.View.ReportName, Chart: res.View.Format == grid.FormatChart}
	latest, err := a.latestDay(ctx, p, attr, c)
	return out, latest, err
}

// reportDefinition reads the content of a report's latest definition, or of
// a report definition, and the title its result takes. A URI that names
// neither, or a report with no definition, is a *notDefinitionError.
func reportDefinition(ctx context.Context, md *analytics.Service, pid, uri string) (string, analytics.ReportDefinitionContent, error) {
	var c analytics.ReportDefinitionContent
	id, err := objectID(pid, uri)
	if err != nil {
		return "", c, &notDefinitionError{err}
	}
	o, err := md.Object(ctx, pid, id)
	if err != nil {
		return "", c, err
	}
	title := o.Title
	if o.Category == analytics.CategoryReport {
		var rc analytics.ReportContent
		if err := json.Unmarshal(o.Content, &rc); err != nil || len(rc.Definitions) == 0 {
			return "", c, &notDefinitionError{fmt.Errorf("report %s has no report definition", uri)}
		}
		if id, err = objectID(pid, rc.Definitions[len(rc.Definitions)-1]); err != nil {
			return "", c, err
		}
		if o, err = md.Object(ctx, pid, id); err != nil {
			return "", c, err
		}
	}
	if o.Category != analytics.CategoryReportDefinition {
		return "", c, &notDefinitionError{fmt.Errorf("%s is neither a report nor a report definition", uri)}
	}
	if err := json.Unmarshal(o.Content, &c); err != nil {
		return "", c, fmt.Errorf("report definition %s: %w", o.URI, err)
	}
	return title, c, nil
}

// notDefinitionError is a URI that names no report with a definition and no
// report definition.
type notDefinitionError struct{ err error }

func (e *notDefinitionError) Error() string { return e.err.Error() }

// latestDay is the latest day of attr among the rows of c: its metrics by
// attr, under its filters; 0 when there are none.
func (a analyticsPort) latestDay(ctx context.Context, p engine.Principal, attr string, c analytics.ReportDefinitionContent) (int64, error) {
	if len(c.Grid.Metrics) == 0 {
		return 0, nil
	}
	byDay := analytics.ReportDefinitionContent{Format: grid.FormatGrid, Filters: c.Filters, Grid: analytics.Grid{
		Rows:    []analytics.GridItem{{Attribute: &analytics.GridAttribute{URI: attr}}},
		Columns: []analytics.GridItem{{MetricGroup: true}}, Metrics: c.Grid.Metrics}}
	res, err := a.exec.Execute(ctx, p.Project, p.User, xtab.Source{Content: &byDay, Slice: sliceOf(p)})
	if err != nil {
		return 0, err
	}
	g, err := a.exec.ResultGrid(ctx, p.Project, res.ID)
	if err != nil {
		return 0, err
	}
	var latest int64
	for row, err := range g.Rows {
		if err != nil {
			return 0, err
		}
		if len(row.Headers) == 0 || !anyValue(row.Values) {
			continue
		}
		if d, ok := dayOf(row.Headers[0]); ok && d > latest {
			latest = d
		}
	}
	return latest, nil
}

func anyValue(vs []*float64) bool {
	for _, v := range vs {
		if v != nil {
			return true
		}
	}
	return false
}

// dayOf reads a date as its date attribute's labels write it, as days
// since dayZero.
func dayOf(s string) (int64, bool) {
	for _, layout := range []string{"2006-01-02", "01/02/2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return int64(t.Sub(dayZero) / (24 * time.Hour)), true
		}
	}
	return 0, false
}

// dateAttributes tells the subscriptions' rules which attributes are dates,
// through the metadata service the app opens after them.
type dateAttributes struct{ a *App }

// IsDate reports whether uri is the date attribute of a date dimension of
// project pid.
func (d dateAttributes) IsDate(ctx context.Context, pid, uri string) (bool, error) {
	if d.a.md == nil {
		return false, nil
	}
	id, err := objectID(pid, uri)
	if err != nil {
		return false, nil
	}
	o, err := d.a.md.Object(ctx, pid, id)
	var nf *analytics.NotFoundError
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil || o.Category != "attribute" {
		return false, err
	}
	var c struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(o.Content, &c)
	return c.Type == "GDC.time.date", nil
}
