package engine

import (
	"fmt"
	"html"
	"strings"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/store"
)

// Styles of the HTML body. Mail clients drop <style> blocks, so each element
// carries its own; the e-mail kind puts the body into its page and footer.
const (
	bodyFont  = `font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;`
	paragraph = `margin:0 0 14px;font-size:16px;line-height:1.5;color:#111827;` + bodyFont
	chartImg  = `display:block;width:100%;max-width:600px;height:auto;border:0;margin:4px 0 12px;`
)

// textHTML shows a plain-text message as HTML: blank lines separate
// paragraphs, and single line breaks stay.
func textHTML(text string) string {
	var b strings.Builder
	for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if p = strings.Trim(p, "\n"); p == "" {
			continue
		}
		lines := strings.Split(p, "\n")
		for i, l := range lines {
			lines[i] = html.EscapeString(l)
		}
		fmt.Fprintf(&b, `<p style="%s">%s</p>`, paragraph, strings.Join(lines, "<br>"))
	}
	return b.String()
}

// inlineReport is an attached report as the HTML body shows it.
type inlineReport struct {
	html  string           // render.HTML's fragment
	chart store.Attachment // the chart's image, with its ContentID; no Path when none
	title string
}

// body is the HTML body of a run's message: the message (its HTML template's
// output, or its text), then each attached report with its chart.
func body(message string, reports []inlineReport) string {
	var b strings.Builder
	b.WriteString(message)
	for _, r := range reports {
		img := ""
		if r.chart.Path != "" {
			img = fmt.Sprintf(`<img src="cid:%s" alt="%s" width="600" style="%s">`, html.EscapeString(r.chart.ContentID),
				html.EscapeString("Chart: "+r.title), chartImg)
		}
		b.WriteString(strings.Replace(r.html, render.ChartSlot, img, 1))
	}
	return b.String()
}
