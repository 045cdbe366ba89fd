package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/heraldhq/herald/analytics/maql"
)

// Chart types of a chart report.
var chartTypes = map[string]bool{"bar": true, "line": true, "pie": true}

// prepareReportDefinition checks a report definition: its format, that its grid names
// labels (or attributes) and metrics of the project, and its filters. Filters are stored
// with URIs.
func (s *Service) prepareReportDefinition(ctx context.Context, pid string, c *ReportDefinitionContent) (ReportDefinitionContent, []int64, error) {
	const field = CategoryReportDefinition + ".content"
	out := *c
	switch out.Format {
	case "":
		out.Format = FormatGrid
	case FormatGrid, FormatChart, FormatOneNumber:
	default:
		return out, nil, invalid(field+".format", "must be grid, chart or oneNumber")
	}
	if err := checkChart(field, out); err != nil {
		return out, nil, err
	}
	// Gather every reference first, so they resolve at once.
	var all []maql.Ref
	filters := make([]*maql.Filter, len(c.Filters))
	for i, f := range c.Filters {
		parsed, err := maql.ParseFilter(f.Expression)
		if err != nil {
			return out, nil, syntaxError(fmt.Sprintf("%s.filters[%d].expression", field, i), err)
		}
		filters[i] = parsed
		all = append(all, parsed.Refs()...)
	}
	items := append(append([]GridItem{}, c.Grid.Rows...), c.Grid.Columns...)
	for _, it := range items {
		if it.Attribute != nil {
			all = append(all, maql.Ref{URI: it.Attribute.URI})
		}
	}
	for _, m := range c.Grid.Metrics {
		all = append(all, maql.Ref{URI: m.URI})
	}
	r, err := s.resolve(ctx, pid, all)
	if err != nil {
		return out, nil, err
	}
	if err := checkGrid(field+".grid", r, c.Grid); err != nil {
		return out, nil, err
	}
	out.Filters = make([]Filter, len(filters))
	for i, f := range filters {
		path := fmt.Sprintf("%s.filters[%d].expression", field, i)
		if err := (&exprChecker{refs: r}).cond(f.Cond); err != nil {
			return out, nil, invalid(path, "%v", err)
		}
		if err := f.Rewrite(r.uri); err != nil {
			return out, nil, invalid(path, "%v", err)
		}
		out.Filters[i] = Filter{Expression: f.String()}
	}
	if out.Grid.Rows == nil {
		out.Grid.Rows = []GridItem{}
	}
	if out.Grid.Columns == nil {
		out.Grid.Columns = []GridItem{}
	}
	if out.Grid.Metrics == nil {
		out.Grid.Metrics = []GridMetric{}
	}
	return out, r.ids(), nil
}

func checkChart(field string, c ReportDefinitionContent) error {
	if c.Format != FormatChart && len(c.Chart) == 0 {
		return nil
	}
	var chart struct {
		Type string `json:"type"`
	}
	if len(bytes.TrimSpace(c.Chart)) == 0 || json.Unmarshal(c.Chart, &chart) != nil {
		return invalid(field+".chart", `must be an object with "type": bar, line or pie`)
	}
	if !chartTypes[chart.Type] {
		return invalid(field+".chart.type", "must be bar, line or pie")
	}
	return nil
}

func checkGrid(field string, r *refs, g Grid) error {
	groups := 0
	for _, part := range []struct {
		name  string
		items []GridItem
	}{{"rows", g.Rows}, {"columns", g.Columns}} {
		for i, it := range part.items {
			path := fmt.Sprintf("%s.%s[%d]", field, part.name, i)
			if it.MetricGroup {
				if groups++; groups > 1 {
					return invalid(path, "metricGroup may appear once in rows and columns")
				}
				continue
			}
			ref := maql.Ref{URI: it.Attribute.URI}
			if _, err := r.want(ref, "a label or an attribute", attributeOrLabel...); err != nil {
				return invalid(path+".attribute.uri", "%v", err)
			}
		}
	}
	for i, m := range g.Metrics {
		if _, err := r.want(maql.Ref{URI: m.URI}, "a metric", metricCategory...); err != nil {
			return invalid(fmt.Sprintf("%s.metrics[%d].uri", field, i), "%v", err)
		}
	}
	return nil
}

// prepareReport checks that a report's definitions are report definitions of the project.
func (s *Service) prepareReport(ctx context.Context, pid string, c *ReportContent) (ReportContent, []int64, error) {
	const field = CategoryReport + ".content"
	if len(c.Definitions) == 0 {
		return ReportContent{}, nil, invalid(field+".definitions", "needs at least one report definition")
	}
	refs := make([]maql.Ref, len(c.Definitions))
	for i, d := range c.Definitions {
		refs[i] = maql.Ref{URI: d}
	}
	r, err := s.resolve(ctx, pid, refs)
	if err != nil {
		return ReportContent{}, nil, err
	}
	for i, ref := range refs {
		if _, err := r.want(ref, "a report definition", CategoryReportDefinition); err != nil {
			return ReportContent{}, nil, invalid(fmt.Sprintf("%s.definitions[%d]", field, i), "%v", err)
		}
	}
	out := ReportContent{Domains: c.Domains, Definitions: c.Definitions}
	if out.Domains == nil {
		out.Domains = []string{}
	}
	return out, r.ids(), nil
}
