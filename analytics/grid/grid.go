package grid

import "iter"

// Report formats of a report definition.
const (
	FormatGrid      = "grid"
	FormatChart     = "chart"
	FormatOneNumber = "oneNumber"
)

// Chart types of a chart report.
const (
	ChartBar  = "bar"
	ChartLine = "line"
	ChartPie  = "pie"
)

// Grid is an executed report laid out for rendering.
//
// The table has len(RowHeaders) attribute columns on the left, followed by one
// data column per entry of Columns. Each data column is described by its
// header path (the values of the column attributes, outermost first, then the
// metric title when the metrics are laid out in columns) and the number format
// of its metric.
type Grid struct {
	// Title is the report's title; it names exported files.
	Title string
	// Format is FormatGrid, FormatChart or FormatOneNumber.
	Format string
	// Chart is the chart type (ChartBar, ChartLine, ChartPie) of a chart report.
	Chart string
	// Filters are the report's filters as a person reads them, e.g. `Region IN (East, West)`.
	Filters []string
	// RowHeaders are the titles of the row attribute columns, e.g. ["Region", "Product"].
	RowHeaders []string
	// RowKinds tells for each row attribute whether it is a date ("date") or
	// not (""), so charts can draw a date attribute as a line.
	RowKinds []string
	// Columns describe the data columns, left to right.
	Columns []Column
	// Rows yields the rows in order. It may be called more than once; each
	// call streams the rows again (from the warehouse or a file).
	Rows iter.Seq2[Row, error]
}

// Column is one data column.
type Column struct {
	// Path is the column's header, outermost level first; its last element
	// is the metric's title.
	Path []string
	// Format is the metric's number format, e.g. "#,##0.00", "#,##0", "0.0%".
	Format string
}

// Row is one row of the table.
type Row struct {
	// Headers are the row attribute values, one per RowHeaders entry.
	Headers []string
	// Values are the data cells, one per Column; nil is an empty cell.
	Values []*float64
}
