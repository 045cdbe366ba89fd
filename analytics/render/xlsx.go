package render

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// XLSX writes g as an Excel workbook with one sheet, named after the title.
//
// The sheet opens with the title, a "Generated" line with generatedAt, the
// filters when there are any and a blank row; then the bold header rows (one
// per column header level, outer levels merged over the columns they span),
// frozen so they stay in view, and the data. Numbers are numeric cells showing
// the metric's number format; attribute values are text. Column widths come
// from the headers and the first rows.
func XLSX(w io.Writer, g *grid.Grid, generatedAt time.Time) error {
	f := excelize.NewFile()
	defer f.Close()
	rows := newRowPipe()
	f.SetZipWriter(func(w io.Writer) excelize.ZipWriter { return newSplicingZip(w, rows) })
	sheet := sheetName(g.Title)
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		return fmt.Errorf("name sheet: %w", err)
	}
	stamp := generatedAt.Format(time.RFC3339)
	if err := f.SetDocProps(&excelize.DocProperties{Title: g.Title, Creator: "Herald", Created: stamp, Modified: stamp}); err != nil {
		return fmt.Errorf("set workbook properties: %w", err)
	}
	x, err := newXLSXSheet(f, sheet, g, rows)
	if err != nil {
		return err
	}
	meta := []string{"Generated " + generatedAt.Format("2006-01-02 15:04 MST")}
	if len(g.Filters) > 0 {
		meta = append(meta, "Filters: "+strings.Join(g.Filters, "; "))
	}
	var written func() error // the workbook's writer, once the rows above the data are in
	start := func(head []grid.Row) error {
		if err := x.start(head, meta); err != nil {
			return err
		}
		if err := x.sw.Flush(); err != nil {
			return fmt.Errorf("flush sheet: %w", err)
		}
		written = writeBehind(f, w, rows)
		return nil
	}
	defer func() { // a panic while the writer waits for rows: end them
		if written != nil && !rows.closed {
			rows.close(errAbandoned)
			_ = written()
		}
	}()
	err = stream(g, sampleSize, start, x.row)
	if written == nil {
		return err
	}
	rows.close(err)
	werr := written()
	if err != nil && !errors.Is(err, errWriterGone) {
		return err
	}
	if werr != nil {
		return fmt.Errorf("write workbook: %w", werr)
	}
	return err
}

// xlsxSheet streams one report into a sheet.
type xlsxSheet struct {
	g      *grid.Grid
	sw     *excelize.StreamWriter
	title  int   // style of the title
	note   int   // style of the Generated and Filters lines
	head   int   // style of the header cells
	group  int   // style of merged outer header cells
	num    []int // style of each data column
	rowNum int   // the last row written
	data   *sheetRows
	rows   *rowPipe // where the data rows go
}

func newXLSXSheet(f *excelize.File, sheet string, g *grid.Grid, rows *rowPipe) (*xlsxSheet, error) {
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return nil, fmt.Errorf("open sheet stream: %w", err)
	}
	x := &xlsxSheet{g: g, sw: sw, rows: rows}
	border := []excelize.Border{{Type: "bottom", Color: "808080", Style: 1}}
	fill := excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"E8EDF3"}}
	styles := []struct {
		id    *int
		style excelize.Style
	}{
		{&x.title, excelize.Style{Font: &excelize.Font{Bold: true, Size: 16}}},
		{&x.note, excelize.Style{Font: &excelize.Font{Italic: true, Color: "595959"}}},
		{&x.head, excelize.Style{Font: &excelize.Font{Bold: true}, Fill: fill, Border: border,
			Alignment: &excelize.Alignment{Vertical: "center", WrapText: true}}},
		{&x.group, excelize.Style{Font: &excelize.Font{Bold: true}, Fill: fill,
			Alignment: &excelize.Alignment{Horizontal: "center", Vertical: "center"}}},
	}
	for _, s := range styles {
		if *s.id, err = f.NewStyle(&s.style); err != nil {
			return nil, fmt.Errorf("add style: %w", err)
		}
	}
	byFormat := map[string]int{}
	for _, c := range g.Columns {
		code := numfmt.ExcelFormat(c.Format)
		id, ok := byFormat[code]
		if !ok && code != "General" {
			if id, err = f.NewStyle(&excelize.Style{CustomNumFmt: &code}); err != nil {
				return nil, fmt.Errorf("add number format %q: %w", code, err)
			}
			byFormat[code] = id
		}
		x.num = append(x.num, id)
	}
	x.data = newSheetRows(len(g.RowHeaders), x.num)
	return x, nil
}

// start sizes the columns from the leading rows, freezes the header and
// writes everything above the data.
func (x *xlsxSheet) start(head []grid.Row, meta []string) error {
	for i, width := range x.widths(head) {
		if err := x.sw.SetColWidth(i+1, i+1, width); err != nil {
			return fmt.Errorf("set column width: %w", err)
		}
	}
	depth := headerDepth(x.g.Columns)
	headerEnd := 1 + len(meta) + 1 + depth
	top := fmt.Sprintf("A%d", headerEnd+1)
	if err := x.sw.SetPanes(&excelize.Panes{
		Freeze: true, YSplit: headerEnd, TopLeftCell: top, ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: top, ActiveCell: top, Pane: "bottomLeft"}},
	}); err != nil {
		return fmt.Errorf("freeze header: %w", err)
	}
	if err := x.set([]any{excelize.Cell{StyleID: x.title, Value: x.g.Title}}, excelize.RowOpts{Height: 24}); err != nil {
		return err
	}
	for _, m := range meta {
		if err := x.set([]any{excelize.Cell{StyleID: x.note, Value: m}}); err != nil {
			return err
		}
	}
	x.rowNum++ // a blank row before the table
	return x.header(depth)
}

// header writes the header rows, merging each outer level over the columns it spans.
func (x *xlsxSheet) header(depth int) error {
	attrs := len(x.g.RowHeaders)
	for level := range depth {
		cells := make([]any, attrs+len(x.g.Columns))
		for i, h := range x.g.RowHeaders {
			if level < depth-1 {
				h = ""
			}
			cells[i] = excelize.Cell{StyleID: x.head, Value: h}
		}
		style := x.head
		if level < depth-1 {
			style = x.group
		}
		for i, c := range x.g.Columns {
			text := headerText(c, level, depth)
			if level < depth-1 && i > 0 && sameGroup(x.g.Columns[i-1], c, level, depth) {
				text = "" // the group's first cell holds its title
			}
			cells[attrs+i] = excelize.Cell{StyleID: style, Value: text}
		}
		if err := x.set(cells); err != nil {
			return err
		}
		if level == depth-1 {
			break
		}
		for i := 0; i < len(x.g.Columns); {
			j := i + 1
			for j < len(x.g.Columns) && sameGroup(x.g.Columns[i], x.g.Columns[j], level, depth) {
				j++
			}
			if j-i > 1 {
				from, _ := excelize.CoordinatesToCellName(attrs+i+1, x.rowNum)
				to, _ := excelize.CoordinatesToCellName(attrs+j, x.rowNum)
				if err := x.sw.MergeCell(from, to); err != nil {
					return fmt.Errorf("merge header: %w", err)
				}
			}
			i = j
		}
	}
	return nil
}

// row writes one data row, as a chunk of rows goes to the workbook's
// writer once full.
func (x *xlsxSheet) row(r grid.Row) error {
	x.rowNum++
	x.rows.buf = x.data.appendRow(x.rows.buf, x.rowNum, r)
	if x.rows.full() {
		return x.rows.send()
	}
	return nil
}

func (x *xlsxSheet) set(cells []any, opts ...excelize.RowOpts) error {
	x.rowNum++
	cell, _ := excelize.CoordinatesToCellName(1, x.rowNum)
	if err := x.sw.SetRow(cell, cells, opts...); err != nil {
		return fmt.Errorf("write row %d: %w", x.rowNum, err)
	}
	return nil
}

// widths estimates column widths, in characters, from the headers and the
// leading rows.
func (x *xlsxSheet) widths(head []grid.Row) []float64 {
	attrs := len(x.g.RowHeaders)
	depth := headerDepth(x.g.Columns)
	out := make([]float64, attrs+len(x.g.Columns))
	for i, h := range x.g.RowHeaders {
		n := utf8.RuneCountInString(h)
		for _, r := range head {
			n = max(n, utf8.RuneCountInString(header(r, i)))
		}
		out[i] = clampWidth(n, 8, 60)
	}
	for i, c := range x.g.Columns {
		n := utf8.RuneCountInString(headerText(c, depth-1, depth))
		for _, r := range head {
			if p := value(r, i); p != nil {
				n = max(n, utf8.RuneCountInString(numfmt.Format(*p, c.Format)))
			}
		}
		out[attrs+i] = clampWidth(n, 10, 40)
	}
	return out
}

// clampWidth turns a length in characters into a column width with a margin.
func clampWidth(n, lo, hi int) float64 {
	return float64(min(max(n+2, lo), hi))
}

// sheetName makes a valid sheet name from a report title: at most 31
// characters, none of : \ / ? * [ ].
func sheetName(title string) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) || r < ' ' {
			return ' '
		}
		return r
	}, title)
	name = strings.Trim(strings.TrimSpace(name), "'")
	if r := []rune(name); len(r) > 31 {
		name = strings.TrimSpace(string(r[:31]))
	}
	if name == "" {
		return "Report"
	}
	return name
}
