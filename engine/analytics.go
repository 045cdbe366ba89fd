package engine

import (
	"context"
	"errors"
	"io"
	"iter"
	"slices"
	"strings"
)

// Principal is who an execution runs as: a user in a project, and the slice
// of the project's data the execution sees. The engine runs a subscription
// as its owner (or as each of its recipients), in the subscription's
// project, and the analytics service applies to the execution what applies
// to that user's own: the filters are the user's mandatory user filters,
// narrowed further for a burst's address to its rows' elements.
type Principal struct {
	User    string // user id
	Project string // project id
	Filters Filters
}

// Filters is a slice of a project's data: conditions in MAQL, every one of
// which each row an execution reads meets. The zero Filters is all the
// data. It is comparable, and its conditions are kept sorted and without
// repeats, so that principals of equal Filters share an execution, and the
// executions and renders the engine shares are keyed by it.
type Filters struct {
	key string // the conditions, sorted, one a line
}

// NewFilters returns the slice of the conditions.
func NewFilters(conds ...string) Filters {
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return Filters{key: strings.Join(slices.Compact(out), "\n")}
}

// Conditions returns the conditions, sorted.
func (f Filters) Conditions() []string {
	if f.key == "" {
		return nil
	}
	return strings.Split(f.key, "\n")
}

// And returns the slice both f and g see.
func (f Filters) And(g Filters) Filters {
	return NewFilters(append(f.Conditions(), g.Conditions()...)...)
}

// String is the conditions, one a line.
func (f Filters) String() string { return f.key }

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
	// UserFilters returns the slice of the data a user sees in a project:
	// the conditions of the mandatory user filters they have.
	UserFilters(ctx context.Context, project, user string) (Filters, error)
	// ProjectFilters returns, in one read, the slices of the data the users
	// with user filters see in a project, by user id; a user it has none for
	// sees all of it.
	ProjectFilters(ctx context.Context, project string) (map[string]Filters, error)
	// BurstRows executes the report a burst reads its recipients from, as
	// p, and yields each of its rows: the value of the label address and
	// the element of the attribute by it has.
	BurstRows(ctx context.Context, p Principal, report, address, by string) (iter.Seq2[BurstRow, error], error)
}

// BurstRow is a row of a burst's report: an address, and the URI of the
// element it gets (/svc/md/<pid>/obj/<attribute>/elements?id=<n>); either
// is "" when the row has none.
type BurstRow struct {
	Address string
	Element string
}
