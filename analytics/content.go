package analytics

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Categories of the objects users create.
const (
	CategoryMetric           = "metric"
	CategoryReportDefinition = "reportDefinition"
	CategoryReport           = "report"
)

// Report definition formats and chart types.
const (
	FormatGrid      = "grid"
	FormatChart     = "chart"
	FormatOneNumber = "oneNumber"
)

// MetricContent is the content of a metric. Expression is stored with object URIs in
// brackets; identifiers in braces are accepted on input. Tree is set by the service.
type MetricContent struct {
	Expression string `json:"expression"`
	Format     string `json:"format,omitempty"`
	Tree       any    `json:"tree,omitempty"`
}

// ReportDefinitionContent is the content of a report definition: what a report shows.
type ReportDefinitionContent struct {
	Format  string          `json:"format"`
	Grid    Grid            `json:"grid"`
	Filters []Filter        `json:"filters"`
	Chart   json.RawMessage `json:"chart,omitempty"`
	// OneNumber holds the options of a oneNumber report, kept as given.
	OneNumber json.RawMessage `json:"oneNumber,omitempty"`
}

// Grid lays out a report: attributes (by label URI) and the metric group in rows and
// columns, and the metrics.
type Grid struct {
	Rows         []GridItem      `json:"rows"`
	Columns      []GridItem      `json:"columns"`
	Metrics      []GridMetric    `json:"metrics"`
	Sort         json.RawMessage `json:"sort,omitempty"`
	ColumnWidths json.RawMessage `json:"columnWidths,omitempty"`
}

// GridItem is "metricGroup" or {"attribute":{...}}.
type GridItem struct {
	MetricGroup bool
	Attribute   *GridAttribute
}

// GridAttribute is an attribute of a grid, shown in a label: URI is the label's URI (an
// attribute URI stands for its default label).
type GridAttribute struct {
	URI    string          `json:"uri"`
	Alias  string          `json:"alias"`
	Totals json.RawMessage `json:"totals,omitempty"`
}

// GridMetric is a metric of a grid.
type GridMetric struct {
	URI   string `json:"uri"`
	Alias string `json:"alias"`
}

// Filter is a report filter, a condition in MAQL.
type Filter struct {
	Expression string `json:"expression"`
}

const metricGroup = "metricGroup"

// MarshalJSON writes "metricGroup" or {"attribute":{...}}.
func (g GridItem) MarshalJSON() ([]byte, error) {
	if g.MetricGroup {
		return json.Marshal(metricGroup)
	}
	return json.Marshal(struct {
		Attribute *GridAttribute `json:"attribute"`
	}{g.Attribute})
}

// UnmarshalJSON reads "metricGroup" or {"attribute":{"uri":...}}.
func (g *GridItem) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if s != metricGroup {
			return errors.New(`must be "metricGroup" or {"attribute":{"uri":...}}`)
		}
		*g = GridItem{MetricGroup: true}
		return nil
	}
	var a struct {
		Attribute *GridAttribute `json:"attribute"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil || a.Attribute == nil || a.Attribute.URI == "" {
		return errors.New(`must be "metricGroup" or {"attribute":{"uri":...}}`)
	}
	*g = GridItem{Attribute: a.Attribute}
	return nil
}

// ReportContent is the content of a report: its definitions, the last one current.
type ReportContent struct {
	Domains     []string `json:"domains"`
	Definitions []string `json:"definitions"`
}
