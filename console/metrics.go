package console

import (
	"html/template"
	"regexp"
	"strings"
)

// metricCall is a metric's call in an expression, f:executeMetric('<uri>'),
// its URI quoted either way.
var metricCall = regexp.MustCompile(`f\s*:\s*executeMetric\s*\(\s*(?:'([^']*)'|"([^"]*)")\s*\)`)

// titled shows the expression src for people: each call of a metric that
// names knows reads as the metric's title, with its URI on hover; the rest,
// and calls of metrics names lacks, as written.
func titled(names map[string]string, src string) template.HTML {
	var b strings.Builder
	at := 0
	for _, m := range metricCall.FindAllStringSubmatchIndex(src, -1) {
		var uri string
		if m[2] >= 0 {
			uri = src[m[2]:m[3]]
		} else {
			uri = src[m[4]:m[5]]
		}
		if names[uri] == "" {
			continue
		}
		b.WriteString(template.HTMLEscapeString(src[at:m[0]]))
		b.WriteString(string(metric(names, uri)))
		at = m[1]
	}
	b.WriteString(template.HTMLEscapeString(src[at:]))
	return template.HTML(b.String())
}

// metric is the title of the metric uri, with the URI on hover; the URI when
// names has no title for it.
func metric(names map[string]string, uri string) template.HTML {
	title := names[uri]
	if title == "" {
		return template.HTML(template.HTMLEscapeString(uri))
	}
	return template.HTML(`<abbr class="metric" title="` + template.HTMLEscapeString(uri) + `">` +
		template.HTMLEscapeString(title) + `</abbr>`)
}
