package email

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/heraldhq/herald/channels"
)

// The elements and attributes a mail's page may have: the layout's, and the
// paragraphs and line breaks of a text shown as HTML.
var (
	pageElements   = set("html", "head", "meta", "title", "body", "div", "table", "tbody", "tr", "td", "h1", "p", "br", "a")
	pageAttributes = set("lang", "charset", "name", "content", "style", "role", "width", "cellpadding", "cellspacing",
		"border", "align", "href")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// FuzzDocument holds the page of a mail to what an HTML parser reads from it:
// whatever the subject, text, subscription title, recipient and link, the
// title and the heading read as the subject, the footer as why the mail came,
// no element or attribute appears that the layout does not write, and a link
// is there only when it is an http or https URL.
func FuzzDocument(f *testing.F) {
	for _, s := range []string{"Revenue fell", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`,
		"</title><script>x</script>", "a & b < c", "' onmouseover='x", "ž\u00a0€", "\x00", "line\r\nline"} {
		f.Add(s, "Revenue is down.\n\nSee the report "+s, "Watch "+s, "ops@example.com", "https://herald.example.com/unsubscribe/a.b")
	}
	f.Add("S", "T", "W", "<b>x</b>@example.com", "javascript:alert(1)")
	f.Add("S", "T", "W", "x@example.com", `https://h.example/u?a="><script>`)
	f.Add("S", "", "", "x@example.com", "")
	f.Fuzz(func(t *testing.T, subject, text, title, to, link string) {
		for _, s := range []string{subject, text, title, to, link} {
			if !utf8.ValidString(s) {
				return
			}
		}
		m := channels.Message{DeliveryID: "d1", Subject: subject, Text: text,
			Source: channels.Source{SubscriptionTitle: title},
			Links:  channels.Links{Subscription: "https://herald.example.com/console/p/s", Unsubscribe: link}}
		doc := document(m, to)
		root, err := html.Parse(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, doc)
		}
		var titles, headings, footers []string
		links := 0
		for n := range root.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			if !pageElements[n.Data] {
				t.Fatalf("element <%s> in the page:\n%s", n.Data, doc)
			}
			for _, a := range n.Attr {
				if !pageAttributes[a.Key] {
					t.Fatalf("attribute %s on <%s> in the page:\n%s", a.Key, n.Data, doc)
				}
				if a.Key == "href" {
					links++
					if !strings.HasPrefix(a.Val, "https://") && !strings.HasPrefix(a.Val, "http://") {
						t.Fatalf("link %q in the page", a.Val)
					}
				}
			}
			switch {
			case n.Data == "title":
				titles = append(titles, textOf(n))
			case n.Data == "h1":
				headings = append(headings, textOf(n))
			case n.Data == "td" && strings.Contains(attr(n, "style"), "font-size:12px"):
				footers = append(footers, textOf(n))
			}
		}
		want := parsed(subject)
		if len(titles) != 1 || titles[0] != want || len(headings) != 1 || headings[0] != want {
			t.Fatalf("subject %q reads as title %q and heading %q", subject, titles, headings)
		}
		if len(footers) != 1 || !strings.HasPrefix(strings.TrimSpace(footers[0]), strings.TrimSpace(parsed(why(m, to)))) {
			t.Fatalf("footer %q, want it to start with %q", footers, why(m, to))
		}
		wantLinks := 1
		if safeLink(link) != "" {
			wantLinks = 2
		}
		if links != wantLinks {
			t.Fatalf("%d links for unsubscribe link %q, want %d:\n%s", links, link, wantLinks, doc)
		}
	})
}

// parsed is s as an HTML parser reads it back from text: line ends as LF and
// NUL as U+FFFD.
func parsed(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
