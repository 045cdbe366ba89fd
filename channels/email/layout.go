package email

import (
	"cmp"
	"html/template"
	"strings"

	"github.com/heraldhq/herald/channels"
)

// page is the HTML document of a mail: the subject as a heading, the body the
// run rendered (the message, then its reports), and the footer. It is tables
// and inline styles, which every common mail client shows alike, one column
// at most 680 pixels wide, so it reads on a phone as on a desktop.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>{{.Subject}}</title></head>
<body style="margin:0;padding:0;background:#f3f4f6;-webkit-text-size-adjust:100%">
{{- if .Preheader}}<div style="display:none;max-height:0;overflow:hidden;opacity:0">{{.Preheader}}</div>{{end}}
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f3f4f6">
<tr><td align="center" style="padding:24px 10px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:680px;background:#ffffff;border:1px solid #e5e7eb;border-radius:10px">
<tr><td style="padding:28px 24px 4px">
<h1 style="margin:0 0 18px;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:22px;line-height:1.3;font-weight:700;color:#111827">{{.Subject}}</h1>
{{.Body}}
</td></tr></table>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:680px">
<tr><td style="padding:16px 24px;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:12px;line-height:1.5;color:#6b7280">
{{.Why}}
{{- if or .Subscription .Unsubscribe}}<br>{{end}}
{{- if .Subscription}}<a href="{{.Subscription}}" style="color:#374151;text-decoration:underline">Open the subscription</a>{{end}}
{{- if and .Subscription .Unsubscribe}} · {{end}}
{{- if .Unsubscribe}}<a href="{{.Unsubscribe}}" style="color:#374151;text-decoration:underline">Unsubscribe</a>{{end}}
</td></tr></table>
</td></tr></table>
</body></html>
`))

type pageView struct {
	Subject, Preheader, Why   string
	Body                      template.HTML
	Subscription, Unsubscribe string
}

// document renders the HTML document of m for recipient to; a message
// without HTML shows its text.
func document(m channels.Message, to string) (string, error) {
	v := pageView{Subject: m.Subject, Preheader: preheader(m.Text), Why: why(m, to),
		// The body is the run's rendering: its own text escaped, its markup the
		// service's or the subscription owner's HTML template.
		Body:         template.HTML(cmp.Or(m.HTML, channels.TextHTML(m.Text))),
		Subscription: m.Links.Subscription, Unsubscribe: m.Links.Unsubscribe}
	var b strings.Builder
	err := page.Execute(&b, v)
	return b.String(), err
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
