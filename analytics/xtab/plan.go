package xtab

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/heraldhq/herald/analytics/query"
)

// plan is everything needed to compute a result and present it: the compiled query and
// the report's layout. It is kept with the result as JSON.
type plan struct {
	SQL        string            `json:"sql"`
	Args       []arg             `json:"args"`
	Attributes []query.Attribute `json:"attributes"`
	// Rows and Columns are the header levels of the two axes, outermost first.
	Rows    []level  `json:"rows"`
	Columns []level  `json:"columns"`
	Metrics []Metric `json:"metrics"`
	View    View     `json:"view"`
	// Filters are the report's filters as a person reads them.
	Filters []string `json:"filters"`
	Chart   string   `json:"chart,omitempty"`
	// Definition is the URI of the report definition executed; empty for an inline one.
	Definition string `json:"definition,omitempty"`
	// Slice is the key of the slice of the data the result holds (the
	// author's mandatory user filters): results of different slices never
	// share a digest, and only a user who sees that slice reads the result.
	Slice string `json:"slice,omitempty"`
}

// level is a header level: the metrics (Metric set), or an attribute of the query.
type level struct {
	Metric bool   `json:"metric,omitempty"`
	Attr   int    `json:"attr"`
	Title  string `json:"title"`
	Date   bool   `json:"date,omitempty"`
}

// Metric is a metric of the report.
type Metric struct {
	URI    string `json:"metricId"`
	Title  string `json:"title"`
	Format string `json:"format"`
}

// View is the report as the execution answer shows it (reportView).
type View struct {
	ReportName string            `json:"reportName"`
	Format     string            `json:"format"`
	Rows       []json.RawMessage `json:"rows"`
	Columns    []json.RawMessage `json:"columns"`
	Metrics    []Metric          `json:"metrics"`
	Filters    []json.RawMessage `json:"filters"`
}

// arg is a query argument that keeps its type through JSON.
type arg struct {
	Int   *int64   `json:"i,omitempty"`
	Float *float64 `json:"f,omitempty"`
	Text  *string  `json:"s,omitempty"`
}

func argsOf(args []any) ([]arg, error) {
	out := make([]arg, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			out[i].Int = &v
		case float64:
			out[i].Float = &v
		case string:
			out[i].Text = &v
		default:
			return nil, fmt.Errorf("query argument of type %T", a)
		}
	}
	return out, nil
}

func (p *plan) args() []any {
	out := make([]any, len(p.Args))
	for i, a := range p.Args {
		switch {
		case a.Int != nil:
			out[i] = *a.Int
		case a.Float != nil:
			out[i] = *a.Float
		case a.Text != nil:
			out[i] = *a.Text
		}
	}
	return out
}

// encode returns the plan as JSON and its digest, which names what it computes.
func (p *plan) encode() ([]byte, string, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, "", fmt.Errorf("encode plan: %w", err)
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:]), nil
}

func decodePlan(data []byte) (*plan, error) {
	var p plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	return &p, nil
}

// metricLevel returns the position of the metric level in levels, or -1.
func metricLevel(levels []level) int {
	for i, l := range levels {
		if l.Metric {
			return i
		}
	}
	return -1
}
