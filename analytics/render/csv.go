package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// CSV writes g as RFC 4180 CSV in UTF-8 (no byte order mark), CRLF line
// ends, every field quoted.
//
// The header has one row per column header level. The row attribute titles
// sit on the last header row, beside the metric titles; on the rows above
// their cells are empty, and every data column repeats its outer header
// values, so each column's full path reads straight down. Numbers are written
// unformatted in their shortest exact decimal form, with no thousands
// separators; empty cells are empty fields. Rows are written as they stream,
// so after a failure the writer holds a partial file.
//
// A text cell (a title or an attribute value) that a spreadsheet would read as
// a formula, because it begins with =, +, -, @, a tab or a carriage return, is
// written with a single quote in front, as OWASP recommends against CSV
// injection; text that reads as a plain number, such as "-5", is left as it is.
func CSV(w io.Writer, g *grid.Grid) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	depth := headerDepth(g.Columns)
	width := len(g.RowHeaders) + len(g.Columns)
	fields := make([]string, 0, width)
	for level := range depth {
		fields = fields[:0]
		for _, h := range g.RowHeaders {
			if level < depth-1 {
				h = ""
			}
			fields = append(fields, textCell(h))
		}
		for _, c := range g.Columns {
			fields = append(fields, textCell(headerText(c, level, depth)))
		}
		if err := writeRecord(bw, fields); err != nil {
			return err
		}
	}
	for r, err := range rows(g) {
		if err != nil {
			return fmt.Errorf("read rows: %w", err)
		}
		fields = fields[:0]
		for i := range g.RowHeaders {
			fields = append(fields, textCell(header(r, i)))
		}
		for i := range g.Columns {
			v := ""
			if p := value(r, i); p != nil {
				v = numfmt.Format(*p, "")
			}
			fields = append(fields, v)
		}
		if err := writeRecord(bw, fields); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

// textCell neutralizes text that a spreadsheet would take for a formula.
func textCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && s[0] != '\t' && s[0] != '\r' {
		return s // a number written as text: no formula
	}
	return "'" + s
}

// writeRecord writes one CSV record with every field quoted. A write error
// sticks in bw, so the last write reports it.
func writeRecord(bw *bufio.Writer, fields []string) error {
	for i, f := range fields {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('"')
		for {
			j := strings.IndexByte(f, '"')
			if j < 0 {
				break
			}
			bw.WriteString(f[:j+1])
			bw.WriteByte('"')
			f = f[j+1:]
		}
		bw.WriteString(f)
		bw.WriteByte('"')
	}
	if _, err := bw.WriteString("\r\n"); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
