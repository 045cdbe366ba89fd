package render

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// ChartSlot is the comment an HTML fragment of a chart report has where the
// chart's image belongs. Whoever has the image (as a cid: part of a mail, say)
// puts an <img> there; left alone, it shows nothing.
const ChartSlot = "<!--herald:chart-->"

// DefaultHTMLRows is how many rows an HTML fragment shows unless told otherwise.
const DefaultHTMLRows = 50

// Styles of the fragment. Mail clients drop <style> blocks and external
// sheets, so every element carries its own.
const (
	htmlFont   = `font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;`
	htmlTitle  = `margin:0 0 4px;font-size:18px;line-height:1.3;font-weight:600;color:#111827;` + htmlFont
	htmlNote   = `margin:0 0 12px;font-size:13px;line-height:1.4;color:#6b7280;` + htmlFont
	htmlGrid   = `border-collapse:collapse;width:100%;font-size:14px;line-height:1.35;color:#1f2937;` + htmlFont
	htmlHead   = `padding:6px 10px;background:#f3f4f6;border-bottom:2px solid #d1d5db;font-weight:600;white-space:nowrap;`
	htmlCell   = `padding:6px 10px;border-bottom:1px solid #e5e7eb;`
	htmlNumber = `text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums;`
	htmlBig    = `margin:8px 0 4px;font-size:40px;line-height:1.1;font-weight:600;color:#111827;` + htmlFont
)

// HTML writes g as a fragment of HTML for the body of a mail: the title, the
// filters, a chart report's ChartSlot, and the first maxRows rows of the
// table (all of them when maxRows < 1) with "and N more rows in the attached
// file" below when it stops short. A oneNumber report is its value in large
// type. Numbers are in their metric's format and colour; every text is
// escaped. The markup is tables with inline styles, as mail clients need.
func HTML(w io.Writer, g *grid.Grid, maxRows int) error {
	bw := bufio.NewWriter(w)
	h := &htmlTable{w: bw, g: g, max: maxRows}
	h.printf(`<div style="margin:0 0 28px">`)
	h.printf(`<h2 style="%s">%s</h2>`, htmlTitle, html.EscapeString(g.Title))
	if len(g.Filters) > 0 {
		h.printf(`<p style="%s">%s</p>`, htmlNote, html.EscapeString("Filters: "+strings.Join(g.Filters, "; ")))
	}
	var err error
	if g.Format == grid.FormatOneNumber {
		err = h.oneNumber()
	} else {
		if g.Format == grid.FormatChart {
			h.printf("%s", ChartSlot)
		}
		err = h.table()
	}
	if err != nil {
		return err
	}
	h.printf(`</div>`)
	if h.err != nil {
		return fmt.Errorf("write HTML: %w", h.err)
	}
	return bw.Flush()
}

type htmlTable struct {
	w     *bufio.Writer
	g     *grid.Grid
	max   int
	shown int
	more  int
	err   error
}

func (h *htmlTable) printf(format string, args ...any) {
	if h.err == nil {
		_, h.err = fmt.Fprintf(h.w, format, args...)
	}
}

func (h *htmlTable) oneNumber() error {
	text, label, err := firstValue(h.g)
	if err != nil {
		return err
	}
	h.printf(`<p style="%s">%s</p>`, htmlBig, html.EscapeString(text))
	if label != "" {
		h.printf(`<p style="%s">%s</p>`, htmlNote, html.EscapeString(label))
	}
	return nil
}

func (h *htmlTable) table() error {
	h.printf(`<div style="overflow-x:auto"><table role="presentation" cellpadding="0" cellspacing="0" style="%s">`, htmlGrid)
	h.header()
	for r, err := range rows(h.g) {
		if err != nil {
			return fmt.Errorf("read rows: %w", err)
		}
		if h.max > 0 && h.shown >= h.max {
			h.more++
			continue
		}
		h.row(r)
	}
	h.printf(`</table></div>`)
	switch {
	case h.shown == 0:
		h.printf(`<p style="%s">No data.</p>`, htmlNote)
	case h.more > 0:
		rows := "rows"
		if h.more == 1 {
			rows = "row"
		}
		h.printf(`<p style="%s">and %s more %s in the attached file</p>`, htmlNote,
			numfmt.Format(float64(h.more), "#,##0"), rows)
	}
	return nil
}

// header writes the header rows; outer levels span the columns they group.
func (h *htmlTable) header() {
	g := h.g
	depth := headerDepth(g.Columns)
	for level := range depth {
		last := level == depth-1
		h.printf(`<tr>`)
		for _, name := range g.RowHeaders {
			if !last {
				name = ""
			}
			h.printf(`<th style="%stext-align:left">%s</th>`, htmlHead, html.EscapeString(name))
		}
		for i := 0; i < len(g.Columns); {
			j := i + 1
			for !last && j < len(g.Columns) && sameGroup(g.Columns[i], g.Columns[j], level, depth) {
				j++
			}
			align := "right"
			if !last {
				align = "center"
			}
			span := ""
			if j-i > 1 {
				span = ` colspan="` + strconv.Itoa(j-i) + `"`
			}
			h.printf(`<th%s style="%stext-align:%s">%s</th>`, span, htmlHead, align,
				html.EscapeString(headerText(g.Columns[i], level, depth)))
			i = j
		}
		h.printf(`</tr>`)
	}
}

func (h *htmlTable) row(r grid.Row) {
	bg := ""
	if h.shown%2 == 1 {
		bg = "background:#f9fafb;"
	}
	h.printf(`<tr style="%s">`, bg)
	for i := range h.g.RowHeaders {
		h.printf(`<td style="%s">%s</td>`, htmlCell, html.EscapeString(header(r, i)))
	}
	for i, c := range h.g.Columns {
		text, color := "", ""
		if p := value(r, i); p != nil {
			text = numfmt.Format(*p, c.Format)
			if col := numfmt.Color(*p, c.Format); col != "" {
				color = "color:" + col + ";"
			}
		}
		h.printf(`<td style="%s%s%s">%s</td>`, htmlCell, htmlNumber, color, html.EscapeString(text))
	}
	h.printf(`</tr>`)
	h.shown++
}
