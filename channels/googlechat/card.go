package googlechat

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
)

// Bounds of a message.
const (
	// MaxBytes bounds the JSON of a message: Google Chat takes 32,000 bytes.
	MaxBytes = 31 << 10
	// MaxButtons bounds the "Open" buttons of a card.
	MaxButtons = 6
	// MaxColumns bounds the cells of a table's row a card shows.
	MaxColumns = 8

	cardID   = "herald-report"
	ellipsis = "…"
)

// layout is how much of a message a card shows: the rows of each table and
// the characters of the text.
type layout struct{ rows, text int }

// layouts are tried in turn until the message fits in MaxBytes.
var layouts = []layout{{20, 8000}, {10, 4000}, {5, 2000}, {0, 1000}}

type object = map[string]any

// Message is the JSON of a message: text, the subject, and one cardsV2 card
// with the subject as its title and the subscription's title under it, the
// text, the condition's
// values, each report's table (its first rows, each a decoratedText: the
// row's labels above, its values below) and an "Open" button per attachment
// that downloads it; with threadKey, the thread it replies to.
func Message(m channels.Message, threadKey string) ([]byte, error) {
	if strings.TrimSpace(m.Subject+m.Text) == "" && len(m.Files()) == 0 {
		return nil, channels.Permanent(errors.New("googlechat: empty message"))
	}
	tables := channels.Tables(m.HTML)
	for _, l := range layouts {
		msg := object{"text": chatText(m), "cardsV2": []object{{"cardId": cardID, "card": card(m, tables, l)}}}
		if threadKey != "" {
			msg["thread"] = object{"threadKey": threadKey}
		}
		b, err := json.Marshal(msg)
		if err != nil {
			return nil, channels.Permanent(fmt.Errorf("googlechat: encode the message: %w", err))
		}
		if len(b) <= MaxBytes {
			return b, nil
		}
	}
	return nil, channels.Permanent(fmt.Errorf("googlechat: the message does not fit in %d bytes", MaxBytes))
}

// chatText is the message's text line: its subject, or its text's first
// line. A "<" is followed by a zero-width space, so that nothing in it is
// read as a mention (<users/all>) or a link.
func chatText(m channels.Message) string {
	s := line(m.Subject)
	if s == "" {
		s, _, _ = strings.Cut(clean(m.Text), "\n")
	}
	return strings.ReplaceAll(cut(s, 1000), "<", "<\u200b")
}

// card lays m out under l.
func card(m channels.Message, tables []channels.Table, l layout) object {
	title := line(m.Subject)
	if title == "" {
		title = "Herald"
	}
	header := object{"title": cut(title, 200)}
	if t := line(m.Source.SubscriptionTitle); t != "" {
		header["subtitle"] = cut(t, 200)
	}
	var sections []object
	if text := clean(m.Text); text != "" {
		sections = append(sections, section("", paragraph(cut(text, l.text))))
	}
	if facts := m.Source.Facts(); len(facts) > 0 {
		var ws []object
		for _, f := range facts {
			ws = append(ws, object{"decoratedText": object{"topLabel": esc(f.Metric), "text": esc(f.Value), "wrapText": true}})
		}
		sections = append(sections, section("Values", ws...))
	}
	for _, t := range tables {
		sections = append(sections, table(t, l.rows))
	}
	if files := files(m); files != nil {
		sections = append(sections, files)
	}
	if len(sections) == 0 {
		sections = append(sections, section("", paragraph(line(m.Subject))))
	}
	return object{"header": header, "sections": sections}
}

// table is a report's table: a row a decoratedText, its labels (the cells
// that are not numbers) above and its values below, each with its column's
// name; then a note of the rows left out.
func table(t channels.Table, rows int) object {
	var ws []object
	shown := min(len(t.Rows), rows)
	for _, r := range t.Rows[:shown] {
		var labels, values []string
		for i, c := range t.Columns[:min(len(t.Columns), MaxColumns)] {
			cell := ""
			if i < len(r) {
				cell = line(r[i])
			}
			switch {
			case !c.Number:
				labels = append(labels, esc(cell))
			case cell != "":
				values = append(values, "<b>"+esc(line(c.Name))+"</b> "+esc(cell))
			}
		}
		w := object{"text": strings.Join(values, " · "), "wrapText": true}
		if len(labels) > 0 {
			w["topLabel"] = strings.Join(labels, " · ")
		}
		if len(values) == 0 {
			w["text"] = "–"
		}
		ws = append(ws, object{"decoratedText": w})
	}
	switch more := t.More + len(t.Rows) - shown; {
	case len(t.Rows) == 0 && t.More == 0:
		ws = append(ws, paragraph("No data."))
	case more > 0:
		ws = append(ws, paragraph("and "+channels.More(more, "row")+" in the attached file"))
	}
	return section(line(t.Title), ws...)
}

// files is a button per attachment with a download link, or a note of the
// files it cannot link to; nil for a message without files.
func files(m channels.Message) object {
	fs := m.Files()
	if len(fs) == 0 {
		return nil
	}
	links := m.Links.Files
	if len(links) == 0 {
		names := make([]string, len(fs))
		for i, f := range fs {
			names[i] = f.Name
		}
		return section("", paragraph(fmt.Sprintf("The files (%s) are in Herald's console, with this run of the subscription.", strings.Join(names, ", "))))
	}
	var buttons []object
	for _, f := range links[:min(len(links), MaxButtons)] {
		buttons = append(buttons, object{"text": cut("Open "+line(f.Name), 100), "onClick": object{"openLink": object{"url": f.URL}}})
	}
	ws := []object{{"buttonList": object{"buttons": buttons}}}
	if n := len(fs) - len(buttons); n > 0 {
		ws = append(ws, paragraph(channels.More(n, "file")+" in Herald's console, with this run of the subscription."))
	}
	return section("", ws...)
}

// section is a card section of widgets, under header when it is not empty.
func section(header string, widgets ...object) object {
	s := object{"widgets": widgets}
	if header != "" {
		s["header"] = esc(cut(header, 200))
	}
	return s
}

// paragraph is a textParagraph of plain text: escaped, its line breaks kept.
func paragraph(text string) object {
	return object{"textParagraph": object{"text": strings.ReplaceAll(esc(text), "\n", "<br>")}}
}

// esc escapes text for a card's formatted text, which reads a little HTML.
func esc(s string) string { return html.EscapeString(s) }

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
