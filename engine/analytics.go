package engine

import (
	"context"
	"errors"
	"io"
)

// Principal is who an execution runs as: a user in a project. The engine
// runs a subscription as its owner, in the subscription's project, and the
// analytics service applies to the execution what applies to that user's own.
type Principal struct {
	User    string // user id
	Project string // project id
}

// Value is a metric's value as the analytics service computed it.
type Value struct {
	Number float64
	Null   bool   // the metric had no value
	Format string // the metric's number format, e.g. "#,##0.00"
}

// ReportResult is an executed report.
type ReportResult struct {
	ID    string // the execution's result, which exports render
	Title string
	Chart bool // a chart report: the mail shows its image

	latest int64 // for newRowsBy: the latest day among the rows kept
}

// Export is a file an export wrote.
type Export struct {
	Name        string // as the recipient sees it
	ContentType string
}

// ErrNoData is an export's answer for a report without data: what it wrote
// is thrown away, and the report is neither attached nor shown.
var ErrNoData = errors.New("the report has no data")

// Analytics is what the engine needs of the analytics service: executions
// and exports in process, each made as a principal. It is called only once
// the decision the API takes for its callers has let the principal run what
// it asks.
type Analytics interface {
	// EvaluateMetric computes a metric over the principal's view of its project.
	EvaluateMetric(ctx context.Context, p Principal, metricURI string) (Value, error)
	// ExecuteReport executes a report or a report definition.
	ExecuteReport(ctx context.Context, p Principal, uri string) (ReportResult, error)
	// ExportReport renders an executed report in format (PDF, CSV, PNG, XLS,
	// HTML) into w as it goes, never holding the whole file. A report
	// without data gives ErrNoData.
	ExportReport(ctx context.Context, p Principal, res ReportResult, format string, w io.Writer) (Export, error)
}
