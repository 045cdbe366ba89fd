package render

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/heraldhq/herald/analytics/grid"
)

// Export formats, as the exporter names them (case-insensitively).
const (
	FormatCSV = "CSV"
	FormatXLS = "XLS" // an .xlsx workbook
	FormatPDF = "PDF"
	FormatPNG = "PNG"
	// FormatHTML is a fragment of HTML for a mail body: see HTML.
	FormatHTML = "HTML"
)

// ContentType returns the MIME type of an export format, or "" for an
// unknown one.
func ContentType(format string) string {
	switch strings.ToUpper(format) {
	case FormatCSV:
		return "text/csv; charset=utf-8"
	case FormatXLS:
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case FormatPDF:
		return "application/pdf"
	case FormatPNG:
		return "image/png"
	case FormatHTML:
		return "text/html; charset=utf-8"
	}
	return ""
}

// Extension returns the file name extension (with its dot) of an export
// format, or "" for an unknown one.
func Extension(format string) string {
	switch strings.ToUpper(format) {
	case FormatCSV:
		return ".csv"
	case FormatXLS:
		return ".xlsx"
	case FormatPDF:
		return ".pdf"
	case FormatPNG:
		return ".png"
	case FormatHTML:
		return ".html"
	}
	return ""
}

// headerDepth is the number of header rows the data columns need.
func headerDepth(cols []grid.Column) int {
	depth := 1
	for _, c := range cols {
		depth = max(depth, len(c.Path))
	}
	return depth
}

// headerText is the text of column c at header level (0 is the outermost).
// Shorter paths are aligned to the bottom, so a metric title is always on
// the last header row.
func headerText(c grid.Column, level, depth int) string {
	i := level - (depth - len(c.Path))
	if i < 0 || i >= len(c.Path) {
		return ""
	}
	return c.Path[i]
}

// sameGroup reports whether columns a and b share their header path down to
// level, so an outer header can span both.
func sameGroup(a, b grid.Column, level, depth int) bool {
	for l := 0; l <= level; l++ {
		if headerText(a, l, depth) != headerText(b, l, depth) {
			return false
		}
	}
	return true
}

// rows returns g.Rows, or no rows when it is nil.
func rows(g *grid.Grid) iter.Seq2[grid.Row, error] {
	if g.Rows == nil {
		return func(func(grid.Row, error) bool) {}
	}
	return g.Rows
}

// sampleSize is how many leading rows size the columns of a table.
const sampleSize = 200

// stream reads the rows of g once. It first collects up to n rows and hands
// them to start (to size columns before anything is written), then passes
// every row, the collected ones included, to each.
func stream(g *grid.Grid, n int, start func(head []grid.Row) error, each func(grid.Row) error) error {
	var head []grid.Row
	started := false
	begin := func() error {
		started = true
		if err := start(head); err != nil {
			return err
		}
		for _, r := range head {
			if err := each(r); err != nil {
				return err
			}
		}
		return nil
	}
	for r, err := range rows(g) {
		if err != nil {
			return fmt.Errorf("read rows: %w", err)
		}
		if started {
			if err := each(r); err != nil {
				return err
			}
			continue
		}
		// A producer may reuse a row's slices for the next one.
		head = append(head, grid.Row{Headers: slices.Clone(r.Headers), Values: slices.Clone(r.Values)})
		if len(head) >= n {
			if err := begin(); err != nil {
				return err
			}
		}
	}
	if !started {
		return begin()
	}
	return nil
}

// value returns the i-th value of r, nil when missing.
func value(r grid.Row, i int) *float64 {
	if i < len(r.Values) {
		return r.Values[i]
	}
	return nil
}

// header returns the i-th attribute value of r, "" when missing.
func header(r grid.Row, i int) string {
	if i < len(r.Headers) {
		return r.Headers[i]
	}
	return ""
}
