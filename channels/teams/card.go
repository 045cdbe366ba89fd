package teams

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
)

// The card's format and the bounds of what it shows.
const (
	// ContentType is the content type of an Adaptive Card attachment.
	ContentType = "application/vnd.microsoft.card.adaptive"
	// Version is the Adaptive Card schema version of the cards, which every
	// Teams client renders.
	Version = "1.4"
	// MaxBytes bounds the JSON of a message: Teams takes about 28 KB.
	MaxBytes = 27 << 10
	// MaxActions bounds the "Open" buttons of a card.
	MaxActions = 6
	// MaxColumns bounds the columns of a table a card shows.
	MaxColumns = 8

	schema   = "http://adaptivecards.io/schemas/adaptive-card.json"
	maxLines = 100
	ellipsis = "…"
)

// layout is how much of a message a card shows: the rows of each table and
// the characters of the text.
type layout struct{ rows, text int }

// layouts are tried in turn until the card fits in MaxBytes.
var layouts = []layout{{20, 8000}, {10, 4000}, {5, 2000}, {0, 1000}}

// element is an element of a card: its properties by name.
type element = map[string]any

// Body is the JSON body of a message to a Teams workflow: a message whose
// one attachment is an Adaptive Card with the subject as its title, the
// text, the condition's values as a fact set, each report's table (its first
// rows) and an "Open" action per attachment that downloads it. Every text is
// a TextRun, which Teams shows as it is, without reading Markdown.
func Body(m channels.Message) ([]byte, error) {
	if strings.TrimSpace(m.Subject+m.Text) == "" && len(m.Files()) == 0 {
		return nil, channels.Permanent(errors.New("teams: empty message"))
	}
	tables := channels.Tables(m.HTML)
	for _, l := range layouts {
		b, err := json.Marshal(envelope(card(m, tables, l)))
		if err != nil {
			return nil, channels.Permanent(fmt.Errorf("teams: encode the card: %w", err))
		}
		if len(b) <= MaxBytes {
			return b, nil
		}
	}
	return nil, channels.Permanent(fmt.Errorf("teams: the message does not fit in a card of %d bytes", MaxBytes))
}

// envelope wraps a card as the message a workflow's trigger takes.
func envelope(card element) element {
	return element{"type": "message", "attachments": []element{{
		"contentType": ContentType, "contentUrl": nil, "content": card,
	}}}
}

// card lays m out under l.
func card(m channels.Message, tables []channels.Table, l layout) element {
	var body []element
	if s := line(m.Subject); s != "" {
		body = append(body, rich(element{"type": "TextRun", "text": s, "weight": "Bolder", "size": "Large"}))
	}
	body = append(body, paragraphs(cut(clean(m.Text), l.text))...)
	if facts := m.Source.Facts(); len(facts) > 0 {
		list := make([]element, len(facts))
		for i, f := range facts {
			list[i] = element{"title": f.Metric, "value": f.Value}
		}
		body = append(body, element{"type": "FactSet", "facts": list})
	}
	for _, t := range tables {
		body = append(body, table(t, l.rows)...)
	}
	c := element{"$schema": schema, "type": "AdaptiveCard", "version": Version, "body": body,
		"msteams": element{"width": "Full"}}
	actions, note := files(m)
	if note != "" {
		c["body"] = append(body, subtle(note))
	}
	if len(actions) > 0 {
		c["actions"] = actions
	}
	return c
}

// files are the card's "Open" actions, one per attachment with a download
// link, and a note of the files it cannot link to.
func files(m channels.Message) ([]element, string) {
	fs := m.Files()
	links := m.Links.Files
	if len(fs) == 0 {
		return nil, ""
	}
	if len(links) == 0 {
		names := make([]string, len(fs))
		for i, f := range fs {
			names[i] = f.Name
		}
		return nil, fmt.Sprintf("The files (%s) are in Herald's console, with this run of the subscription.", strings.Join(names, ", "))
	}
	var actions []element
	for _, f := range links[:min(len(links), MaxActions)] {
		actions = append(actions, element{"type": "Action.OpenUrl", "title": "Open " + line(f.Name), "url": f.URL})
	}
	if n := len(fs) - len(actions); n > 0 {
		return actions, fmt.Sprintf("%s in Herald's console, with this run of the subscription.", channels.More(n, "file"))
	}
	return actions, ""
}

// table lays out a report's table: its title, its header and its first
// rows, and a note of the rows and columns it leaves out.
func table(t channels.Table, rows int) []element {
	out := []element{withProps(rich(element{"type": "TextRun", "text": line(t.Title), "weight": "Bolder"}),
		element{"separator": true, "spacing": "Large"})}
	cols := t.Columns[:min(len(t.Columns), MaxColumns)]
	shown := min(len(t.Rows), rows)
	if len(cols) > 0 && shown > 0 {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		out = append(out, columnSet(cols, names, true))
		for _, r := range t.Rows[:shown] {
			out = append(out, columnSet(cols, r, false))
		}
	}
	switch more := t.More + len(t.Rows) - shown; {
	case len(t.Rows) == 0 && t.More == 0:
		out = append(out, subtle("No data."))
	case more > 0:
		out = append(out, subtle("and "+channels.More(more, "row")+" in the attached file"))
	}
	if n := len(t.Columns) - len(cols); n > 0 && shown > 0 {
		out = append(out, subtle("and "+channels.More(n, "column")+" in the attached file"))
	}
	return out
}

// columnSet is one row of a table: a column per cell, equally wide in every
// row so that the rows line up, numbers right-aligned.
func columnSet(cols []channels.Column, cells []string, header bool) element {
	list := make([]element, len(cols))
	for i, c := range cols {
		text := ""
		if i < len(cells) {
			text = line(cells[i])
		}
		if text == "" {
			text = "\u00a0" // a cell needs a text
		}
		run := element{"type": "TextRun", "text": text}
		if header {
			run["weight"] = "Bolder"
		}
		block := rich(run)
		if c.Number {
			block["horizontalAlignment"] = "Right"
		}
		list[i] = element{"type": "Column", "width": "stretch", "items": []element{block}}
	}
	return element{"type": "ColumnSet", "spacing": "Small", "columns": list}
}

// paragraphs lays out text a line a block, a blank line as space between
// blocks, at most maxLines lines.
func paragraphs(text string) []element {
	var out []element
	gap := false
	for i, l := range strings.Split(text, "\n") {
		if i == maxLines {
			out = append(out, rich(element{"type": "TextRun", "text": ellipsis}))
			break
		}
		if l = strings.TrimRight(l, " \t"); l == "" {
			gap = true
			continue
		}
		b := rich(element{"type": "TextRun", "text": l})
		if gap {
			b["spacing"] = "Medium"
		} else if len(out) > 0 {
			b["spacing"] = "None"
		}
		out, gap = append(out, b), false
	}
	return out
}

// rich is a RichTextBlock of text runs, which Teams shows without reading
// Markdown.
func rich(runs ...element) element {
	return element{"type": "RichTextBlock", "inlines": runs}
}

// subtle is a note in small, subtle text.
func subtle(text string) element {
	return rich(element{"type": "TextRun", "text": text, "isSubtle": true, "size": "Small"})
}

func withProps(e, props element) element {
	for k, v := range props {
		e[k] = v
	}
	return e
}

// clean makes s valid UTF-8 with \n line breaks and trims it; line makes it
// one line too.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

func line(s string) string { return strings.Join(strings.Fields(clean(s)), " ") }

// cut cuts s at max characters, ending it with an ellipsis when cut.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + ellipsis
}
