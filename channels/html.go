package channels

import (
	"fmt"
	"html"
	"strings"
)

// paragraph is the inline style of a message's paragraphs: mail clients drop
// <style> blocks, so each element carries its own.
const paragraph = `margin:0 0 14px;font-size:16px;line-height:1.5;color:#111827;` +
	`font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;`

// TextHTML is a plain-text message as HTML, the same wherever a message is
// shown as HTML: blank lines separate paragraphs, single line breaks stay,
// and every character is escaped.
func TextHTML(text string) string {
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
