package engine

import (
	"fmt"
	"html"
	"strings"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// chartImg is the inline style of a chart: mail clients drop <style> blocks.
const chartImg = `display:block;width:100%;max-width:600px;height:auto;border:0;margin:4px 0 12px;`

// inlineReport is an attached report as the HTML body shows it.
type inlineReport struct {
	html  string           // render.HTML's fragment
	chart store.Attachment // the chart's image, with its ContentID; no Path when none
	title string
}

// body is the HTML body of a run's message: the message (its HTML template's
// output, or else its text), then each attached report with its chart. A
// message with neither an HTML template nor reports has none: a kind that
// shows HTML shows the text as channels.TextHTML does.
func body(m message, reports []inlineReport) string {
	if m.html == "" && len(reports) == 0 {
		return ""
	}
	var b strings.Builder
	if m.html != "" {
		b.WriteString(m.html)
	} else {
		b.WriteString(channels.TextHTML(m.text))
	}
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
