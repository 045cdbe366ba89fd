package channels

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Table is an attached report's table as a message's HTML shows it: a kind
// that cannot show the HTML but can lay out a table (a Teams card, a Google
// Chat card) reads it with Tables.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]string // cells as shown, in the metrics' number formats; one per column
	// More is how many rows the HTML left out ("and N more rows in the
	// attached file").
	More int
}

// Column is a column of a Table.
type Column struct {
	Name   string // its header; the levels of a pivoted header joined by " / "
	Number bool   // a metric's values, shown right-aligned
}

// MaxTables bounds the tables Tables reads, MaxTableRows the rows of each it
// keeps (it counts the rest in More) and
// MaxTableColumns, the columns of each it reads.
const (
	MaxTables       = 20
	MaxTableRows    = 200
	MaxTableColumns = 100
)

// moreRows is the note under a table the HTML stops short of.
var moreRows = regexp.MustCompile(`^and ([0-9][0-9,.' \x{a0}]*) more rows? in the attached file$`)

// Tables reads the tables of the attached reports out of a message's HTML:
// each report is a <div> that starts with its title in an <h2> and holds its
// table and, when the table stops short, the note of the rows left out (the
// fragment analytics/render.HTML writes). A report without a table (one
// number) has none; HTML that does not parse has none.
func Tables(body string) []Table {
	if body == "" {
		return nil
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return nil
	}
	var out []Table
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if len(out) >= MaxTables {
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Div {
			if h := firstElement(n); h != nil && h.DataAtom == atom.H2 {
				if t, ok := reportTable(n, h); ok {
					out = append(out, t)
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// reportTable reads the report of div, whose title is h.
func reportTable(div, h *html.Node) (Table, bool) {
	table := find(div, atom.Table)
	if table == nil {
		return Table{}, false
	}
	t := Table{Title: text(h)}
	var heads [][]string
	var numbers []bool
	for _, tr := range all(table, atom.Tr) {
		var cells []string
		var right []bool
		header := false
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || c.DataAtom != atom.Th && c.DataAtom != atom.Td {
				continue
			}
			header = header || c.DataAtom == atom.Th
			span := 1
			if n, err := strconv.Atoi(attr(c, "colspan")); err == nil && n > 1 && n <= 1000 {
				span = n
			}
			for range min(span, MaxTableColumns-len(cells)) {
				cells = append(cells, text(c))
				right = append(right, strings.Contains(attr(c, "style"), "text-align:right"))
			}
		}
		switch {
		case header:
			heads, numbers = append(heads, cells), right
		case len(t.Rows) < MaxTableRows:
			t.Rows = append(t.Rows, cells)
		default:
			t.More++
		}
	}
	t.Columns = columns(heads, numbers)
	for _, p := range all(div, atom.P) {
		if m := moreRows.FindStringSubmatch(text(p)); m != nil {
			n, _ := strconv.Atoi(strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, m[1]))
			t.More += min(n, 1<<30)
		}
	}
	return t, true
}

// columns names the columns from the header rows, outermost first: a
// column's name is its levels that are not empty, joined by " / ", each
// level once.
func columns(heads [][]string, numbers []bool) []Column {
	if len(heads) == 0 {
		return nil
	}
	cols := make([]Column, len(heads[len(heads)-1]))
	for i := range cols {
		var parts []string
		for _, row := range heads {
			if i < len(row) && row[i] != "" && (len(parts) == 0 || parts[len(parts)-1] != row[i]) {
				parts = append(parts, row[i])
			}
		}
		cols[i] = Column{Name: strings.Join(parts, " / "), Number: i < len(numbers) && numbers[i]}
	}
	return cols
}

// firstElement returns n's first child element.
func firstElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// find returns the first element a below n, depth first.
func find(n *html.Node, a atom.Atom) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == a {
			return c
		}
		if f := find(c, a); f != nil {
			return f
		}
	}
	return nil
}

// all returns the elements a below n in document order, not looking inside
// one it found.
func all(n *html.Node, a atom.Atom) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == a {
			out = append(out, c)
			continue
		}
		out = append(out, all(c, a)...)
	}
	return out
}

// attr returns n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// text is the text below n with its white space collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
