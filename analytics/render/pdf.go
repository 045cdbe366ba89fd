package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// Page geometry of the PDF, in millimetres and points.
const (
	pdfMargin   = 12.0 // left, right and top margin
	pdfBottom   = 16.0 // space kept below the table for the footer
	pdfPad      = 1.6  // padding inside a table cell
	pdfBodySize = 9.0  // table text, in points
	pdfMinSize  = 6.5  // the smallest table text a wide table shrinks to
	pdfMinCol   = 12.0 // the narrowest column
	pdfMaxAttr  = 70.0 // the widest attribute column
	pdfMaxNum   = 45.0 // the widest number column
	ptToMM      = 25.4 / 72
	ellipsis    = "…"
	fontFamily  = "go"
)

// PDF writes g as an A4 PDF document: the title, the filters, when the report
// was generated, and the table, which breaks across pages with the header
// repeated on each and page numbers in the footer. A wide table turns the
// pages to landscape and, if it must, shrinks its text; numbers are
// right-aligned in their metric's format, and text too long for its column
// ends in an ellipsis. A oneNumber report is its value in large type. A chart
// report shows its chart, as PNG draws it, above the table on the first page.
func PDF(w io.Writer, g *grid.Grid, generatedAt time.Time) error {
	pdf := newPDF(g.Title, generatedAt)
	if g.Format == grid.FormatOneNumber {
		if err := pdfOneNumber(pdf, g, generatedAt); err != nil {
			return err
		}
	} else {
		t := &pdfTable{pdf: pdf, g: g, generatedAt: generatedAt}
		if g.Format == grid.FormatChart {
			var chart bytes.Buffer
			if err := PNG(&chart, g); err != nil {
				return err
			}
			pdf.RegisterImageOptionsReader(chartImage, fpdf.ImageOptions{ImageType: "PNG"}, &chart)
			t.chart = true
		}
		if err := stream(g, sampleSize, t.start, t.row); err != nil {
			return err
		}
		t.finish()
	}
	if err := pdf.Output(w); err != nil {
		return fmt.Errorf("write PDF: %w", err)
	}
	return nil
}

func newPDF(title string, generatedAt time.Time) *fpdf.Fpdf {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddUTF8FontFromBytes(fontFamily, "", regularTTF)
	pdf.AddUTF8FontFromBytes(fontFamily, "B", boldTTF)
	pdf.SetTitle(title, true)
	pdf.SetCreator("Herald", true)
	pdf.SetCreationDate(generatedAt)
	pdf.SetModificationDate(generatedAt)
	pdf.SetMargins(pdfMargin, pdfMargin, pdfMargin)
	pdf.SetCellMargin(pdfPad)
	pdf.SetAutoPageBreak(false, pdfBottom)
	pdf.AliasNbPages("{nb}")
	pdf.SetFooterFunc(func() {
		pw, ph := pdf.GetPageSize()
		pdf.SetFont(fontFamily, "", 8)
		pdf.SetTextColor(110, 110, 110)
		pdf.SetXY(pdfMargin, ph-pdfMargin+2)
		half := (pw - 2*pdfMargin) / 2
		pdf.CellFormat(half, 4, fit(pdf, title, half), "", 0, "L", false, 0, "")
		pdf.CellFormat(half, 4, fmt.Sprintf("Page %d of {nb}", pdf.PageNo()), "", 0, "R", false, 0, "")
	})
	return pdf
}

// chartImage names the chart of a chart report among the PDF's images.
const chartImage = "chart"

// pdfChartShare is the largest share of the first page's height the chart takes.
const pdfChartShare = 0.45

// chartBlock draws the registered chart across the page, as wide as the
// margins allow and at most pdfChartShare of the page high, and moves below it.
func chartBlock(pdf *fpdf.Fpdf) {
	info := pdf.GetImageInfo(chartImage)
	if info == nil {
		return
	}
	pw, ph := pdf.GetPageSize()
	w := pw - 2*pdfMargin
	h := w * info.Height() / info.Width()
	if limit := ph * pdfChartShare; h > limit {
		w, h = limit*info.Width()/info.Height(), limit
	}
	x, y := (pw-w)/2, pdf.GetY()
	pdf.ImageOptions(chartImage, x, y, w, h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	pdf.SetY(y + h + 4)
}

// titleBlock writes the title, the filters and the Generated line.
func titleBlock(pdf *fpdf.Fpdf, g *grid.Grid, generatedAt time.Time) {
	pw, _ := pdf.GetPageSize()
	width := pw - 2*pdfMargin
	pdf.SetTextColor(20, 20, 20)
	pdf.SetFont(fontFamily, "B", 16)
	pdf.MultiCell(width, 7.5, g.Title, "", "L", false)
	pdf.SetFont(fontFamily, "", 9)
	pdf.SetTextColor(90, 90, 90)
	if len(g.Filters) > 0 {
		pdf.MultiCell(width, 4.5, "Filters: "+strings.Join(g.Filters, "; "), "", "L", false)
	}
	pdf.MultiCell(width, 4.5, "Generated "+generatedAt.Format("2006-01-02 15:04 MST"), "", "L", false)
	pdf.Ln(4)
}

// pdfOneNumber writes the first value of g in large type under the title.
func pdfOneNumber(pdf *fpdf.Fpdf, g *grid.Grid, generatedAt time.Time) error {
	text, label, err := firstValue(g)
	if err != nil {
		return err
	}
	pdf.AddPage()
	titleBlock(pdf, g, generatedAt)
	pw, ph := pdf.GetPageSize()
	width := pw - 2*pdfMargin
	pdf.SetY(ph * 0.3)
	pdf.SetTextColor(20, 20, 20)
	size := 48.0
	pdf.SetFont(fontFamily, "B", size)
	for size > 12 && pdf.GetStringWidth(text) > width {
		size -= 4
		pdf.SetFontSize(size)
	}
	pdf.CellFormat(width, size*ptToMM*1.3, fit(pdf, text, width), "", 1, "C", false, 0, "")
	pdf.SetFont(fontFamily, "", 14)
	pdf.SetTextColor(90, 90, 90)
	pdf.CellFormat(width, 8, fit(pdf, label, width), "", 1, "C", false, 0, "")
	return nil
}

// firstValue reads the first value of g, formatted, and the title of its
// column. With no value the text is "No data".
func firstValue(g *grid.Grid) (text, label string, err error) {
	text = "No data"
	for r, err := range rows(g) {
		if err != nil {
			return "", "", fmt.Errorf("read rows: %w", err)
		}
		for i, c := range g.Columns {
			if p := value(r, i); p != nil {
				return numfmt.Format(*p, c.Format), strings.Join(c.Path, " / "), nil
			}
		}
		break
	}
	if len(g.Columns) > 0 {
		label = strings.Join(g.Columns[0].Path, " / ")
	}
	return text, label, nil
}

// fit returns s, or as much of it as fits in width followed by an ellipsis,
// in the current font.
func fit(pdf *fpdf.Fpdf, s string, width float64) string {
	if pdf.GetStringWidth(s) <= width {
		return s
	}
	r := []rune(s)
	lo, hi := 0, len(r) // r[:lo]+… fits; r[:hi]+… does not, or hi is all of r
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if pdf.GetStringWidth(string(r[:mid])+ellipsis) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 && pdf.GetStringWidth(ellipsis) > width {
		return ""
	}
	return strings.TrimRight(string(r[:lo]), " ") + ellipsis
}
