package email

import (
	"html/template"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/channels"
)

// The HTML document of a mail: the subject as a heading, the body the run
// rendered (the message, then its reports), and the footer. It is tables and
// inline styles, which every common mail client shows alike, one column at
// most 680 pixels wide, so it reads on a phone as on a desktop.
const (
	font = `font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;`

	pageStart = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>`
	pageBody = `</title></head>
<body style="margin:0;padding:0;background:#f3f4f6;-webkit-text-size-adjust:100%">`
	preheaderStart = `<div style="display:none;max-height:0;overflow:hidden;opacity:0">`
	cardStart      = `
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f3f4f6">
<tr><td align="center" style="padding:24px 10px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:680px;background:#ffffff;border:1px solid #e5e7eb;border-radius:10px">
<tr><td style="padding:28px 24px 4px">
<h1 style="margin:0 0 18px;` + font + `font-size:22px;line-height:1.3;font-weight:700;color:#111827">`
	footerStart = `
</td></tr></table>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:680px">
<tr><td style="padding:16px 24px;` + font + `font-size:12px;line-height:1.5;color:#6b7280">
`
	linkStart = `<a href="`
	linkStyle = `" style="color:#374151;text-decoration:underline">`
	pageEnd   = `
</td></tr></table>
</td></tr></table>
</body></html>
`
)

// document renders the HTML document of m for recipient to; a message
// without HTML shows its text. The page is written piece by piece, which
// costs a quarter of executing it as an html/template: the subject, the
// preheader and the footer are escaped as HTML text (escapeHTML), a link is
// written only when it is an http or https URL, and the body is the run's
// rendering as it is: its own text escaped, its markup the service's or the
// subscription owner's HTML template.
func document(m channels.Message, to string) string {
	body := m.HTML
	if body == "" {
		body = channels.TextHTML(m.Text)
	}
	subject := escapeHTML(m.Subject)
	sub, unsub := safeLink(m.Links.Subscription), safeLink(m.Links.Unsubscribe)
	var b strings.Builder
	b.Grow(len(pageStart) + len(cardStart) + len(footerStart) + len(pageEnd) + len(body) + 1024)
	b.WriteString(pageStart)
	b.WriteString(subject)
	b.WriteString(pageBody)
	if p := preheader(m.Text); p != "" {
		b.WriteString(preheaderStart)
		b.WriteString(escapeHTML(p))
		b.WriteString(`</div>`)
	}
	b.WriteString(cardStart)
	b.WriteString(subject)
	b.WriteString("</h1>\n")
	b.WriteString(body)
	b.WriteString(footerStart)
	b.WriteString(escapeHTML(why(m, to)))
	if sub != "" || unsub != "" {
		b.WriteString(`<br>`)
	}
	if sub != "" {
		b.WriteString(linkStart + sub + linkStyle + `Open the subscription</a>`)
	}
	if sub != "" && unsub != "" {
		b.WriteString(` · `)
	}
	if unsub != "" {
		b.WriteString(linkStart + unsub + linkStyle + `Unsubscribe</a>`)
	}
	b.WriteString(pageEnd)
	return b.String()
}

// escapeHTML escapes s for HTML text and for a quoted attribute value.
func escapeHTML(s string) string { return template.HTMLEscapeString(s) }

// safeLink returns u, escaped for an attribute value, when it is an absolute
// http or https URL, and "" otherwise.
func safeLink(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	return escapeHTML(p.String())
}

// textFooter is the footer of the text part: why the mail came, and the links.
func textFooter(m channels.Message, to string) string {
	w := why(m, to)
	if w == "" {
		return ""
	}
	out := "\n\n-- \n" + w
	if m.Links.Subscription != "" {
		out += "\nOpen the subscription: " + m.Links.Subscription
	}
	if m.Links.Unsubscribe != "" {
		out += "\nUnsubscribe: " + m.Links.Unsubscribe
	}
	return out
}

// why says why the recipient got the mail; "" for a message no subscription sent.
func why(m channels.Message, to string) string {
	title := m.Source.SubscriptionTitle
	if title == "" {
		return ""
	}
	s := "You get this mail because the Herald subscription “" + title + "” sends to " + to + "."
	if m.Source.Manual {
		s += " It was sent now by hand, outside its schedule."
	}
	return s
}

// preheader is the line inboxes show after the subject: the start of the text.
func preheader(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 140 {
		text = string(r[:139]) + "…"
	}
	return text
}
