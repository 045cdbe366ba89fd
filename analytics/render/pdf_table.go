package render

import (
	"strconv"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// pdfTable lays a report out as a table across PDF pages.
type pdfTable struct {
	pdf         *fpdf.Fpdf
	g           *grid.Grid
	generatedAt time.Time

	chart  bool      // the first page shows the registered chart above the table
	orient string    // "P" or "L"
	size   float64   // table text size, in points
	widths []float64 // column widths, attributes first
	rowH   float64
	rows   int
}

// start lays the table out from the leading rows and opens the first page.
func (t *pdfTable) start(head []grid.Row) error {
	t.layout(head)
	t.newPage()
	return t.pdf.Error()
}

// layout chooses the orientation, text size and column widths.
func (t *pdfTable) layout(head []grid.Row) {
	content := t.measure(head)
	attrs := len(t.g.RowHeaders)
	widths := func(size float64) ([]float64, float64) {
		out, total := make([]float64, len(content)), 0.0
		for i, c := range content {
			hi := pdfMaxNum
			if i < attrs {
				hi = pdfMaxAttr
			}
			// A millimetre of slack keeps rounding from cutting the widest text.
			out[i] = min(max(c*size/pdfBodySize+2*pdfPad+1, pdfMinCol), hi)
			total += out[i]
		}
		return out, total
	}
	portrait, landscape := 210-2*pdfMargin, 297-2*pdfMargin
	t.size, t.orient = pdfBodySize, "P"
	w, total := widths(t.size)
	usable := portrait
	if total > portrait {
		t.orient, usable = "L", landscape
	}
	for total > usable && t.size > pdfMinSize {
		t.size = max(t.size-0.5, pdfMinSize)
		w, total = widths(t.size)
	}
	if total > usable {
		for i := range w {
			w[i] *= usable / total
		}
	}
	t.widths = w
	t.rowH = t.size * ptToMM * 1.75
}

// measure returns the width each column's text needs at pdfBodySize: its
// header and the values of the leading rows.
func (t *pdfTable) measure(head []grid.Row) []float64 {
	pdf := t.pdf
	attrs := len(t.g.RowHeaders)
	depth := headerDepth(t.g.Columns)
	content := make([]float64, attrs+len(t.g.Columns))
	fit := func(i int, style, s string) {
		pdf.SetFont(fontFamily, style, pdfBodySize)
		content[i] = max(content[i], pdf.GetStringWidth(s))
	}
	for i, h := range t.g.RowHeaders {
		fit(i, "B", h)
		for _, r := range head {
			fit(i, "", header(r, i))
		}
	}
	for i, c := range t.g.Columns {
		fit(attrs+i, "B", headerText(c, depth-1, depth))
		for _, r := range head {
			if p := value(r, i); p != nil {
				fit(attrs+i, "", numfmt.Format(*p, c.Format))
			}
		}
	}
	// An outer header wider than the columns it spans widens them evenly.
	pdf.SetFont(fontFamily, "B", pdfBodySize)
	for level := 0; level < depth-1; level++ {
		for i := 0; i < len(t.g.Columns); {
			j, have := i+1, content[attrs+i]
			for j < len(t.g.Columns) && sameGroup(t.g.Columns[i], t.g.Columns[j], level, depth) {
				have += content[attrs+j] + 2*pdfPad
				j++
			}
			if need := pdf.GetStringWidth(headerText(t.g.Columns[i], level, depth)); need > have {
				for k := i; k < j; k++ {
					content[attrs+k] += (need - have) / float64(j-i)
				}
			}
			i = j
		}
	}
	return content
}

// newPage opens a page (the title goes on the first) and writes the header.
func (t *pdfTable) newPage() {
	pdf := t.pdf
	pdf.AddPageFormat(t.orient, pdf.GetPageSizeStr("A4"))
	if pdf.PageNo() == 1 {
		titleBlock(pdf, t.g, t.generatedAt)
		if t.chart {
			chartBlock(pdf)
		}
	}
	t.header()
}

// header writes the header rows; outer levels span the columns they group.
func (t *pdfTable) header() {
	pdf := t.pdf
	attrs := len(t.g.RowHeaders)
	depth := headerDepth(t.g.Columns)
	pdf.SetFont(fontFamily, "B", t.size)
	pdf.SetFillColor(232, 237, 243)
	pdf.SetTextColor(20, 20, 20)
	pdf.SetDrawColor(150, 150, 150)
	pdf.SetLineWidth(0.2)
	h := t.rowH * 1.15
	for level := range depth {
		last := level == depth-1
		pdf.SetX(pdfMargin)
		for i, name := range t.g.RowHeaders {
			if !last {
				name = ""
			}
			t.cell(t.widths[i], h, name, "L", true)
		}
		for i := 0; i < len(t.g.Columns); {
			j, width := i+1, t.widths[attrs+i]
			for !last && j < len(t.g.Columns) && sameGroup(t.g.Columns[i], t.g.Columns[j], level, depth) {
				width += t.widths[attrs+j]
				j++
			}
			if last {
				t.cell(width, h, headerText(t.g.Columns[i], level, depth), "R", true)
			} else {
				// A group's title, centred and underlined across its columns.
				x, y := pdf.GetX(), pdf.GetY()
				t.cell(width, h, headerText(t.g.Columns[i], level, depth), "C", true)
				pdf.Line(x+pdfPad, y+h-0.3, x+width-pdfPad, y+h-0.3)
			}
			i = j
		}
		pdf.Ln(h)
	}
	y := pdf.GetY()
	pdf.Line(pdfMargin, y, pdfMargin+sum(t.widths), y)
}

// row writes one data row, on a new page when this one is full.
func (t *pdfTable) row(r grid.Row) error {
	pdf := t.pdf
	if _, ph := pdf.GetPageSize(); pdf.GetY()+t.rowH > ph-pdfBottom {
		t.newPage()
	}
	pdf.SetFont(fontFamily, "", t.size)
	pdf.SetTextColor(33, 33, 33)
	pdf.SetFillColor(245, 247, 250)
	zebra := t.rows%2 == 1
	pdf.SetX(pdfMargin)
	attrs := len(t.g.RowHeaders)
	for i := range attrs {
		t.cell(t.widths[i], t.rowH, header(r, i), "L", zebra)
	}
	for i, c := range t.g.Columns {
		text, color := "", ""
		if p := value(r, i); p != nil {
			text, color = numfmt.Format(*p, c.Format), numfmt.Color(*p, c.Format)
		}
		t.number(t.widths[attrs+i], text, color, zebra)
	}
	pdf.Ln(t.rowH)
	t.rows++
	return pdf.Error()
}

// finish notes an empty table.
func (t *pdfTable) finish() {
	if t.rows > 0 {
		return
	}
	t.pdf.SetFont(fontFamily, "", t.size)
	t.pdf.SetTextColor(90, 90, 90)
	t.pdf.Ln(2)
	t.pdf.CellFormat(0, t.rowH, "No data", "", 1, "L", false, 0, "")
}

// cell writes text in a cell of the table, cut short with an ellipsis when
// it does not fit.
func (t *pdfTable) cell(width, h float64, text, align string, fill bool) {
	t.pdf.CellFormat(width, h, fit(t.pdf, text, width-2*pdfPad), "", 0, align, fill, 0, "")
}

// number writes a right-aligned number, in smaller type when it does not
// fit, as a cut number would mislead, and in the colour its format gives it
// (a CSS "#rrggbb", or "" for the row's colour).
func (t *pdfTable) number(width float64, text, color string, fill bool) {
	pdf := t.pdf
	room := width - 2*pdfPad
	size := t.size
	for size > 4 && pdf.GetStringWidth(text) > room {
		size -= 0.5
		pdf.SetFontSize(size)
	}
	if r, g, b, ok := pdfRGB(color); ok {
		r0, g0, b0 := pdf.GetTextColor()
		pdf.SetTextColor(r, g, b)
		defer pdf.SetTextColor(r0, g0, b0)
	}
	t.cell(width, t.rowH, text, "R", fill)
	if size != t.size {
		pdf.SetFontSize(t.size)
	}
}

// pdfRGB reads a CSS colour "#rrggbb".
func pdfRGB(color string) (r, g, b int, ok bool) {
	if len(color) != 7 || color[0] != '#' {
		return 0, 0, 0, false
	}
	v, err := strconv.ParseUint(color[1:], 16, 32)
	if err != nil {
		return 0, 0, 0, false
	}
	return int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff), true
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}
