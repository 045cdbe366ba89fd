package channels

import (
	"errors"
	"fmt"
	"html"
	"os"
	"strings"
	"time"
)

// MiB is a mebibyte, the unit of the maxAttachmentBytes keys.
const MiB = 1 << 20

// FilesSize is the size in bytes of m's files (its attachments other than
// the images of its HTML). A file that cannot be looked at counts nothing:
// the sender that reads it reports it.
func FilesSize(m Message) int64 {
	var n int64
	for _, a := range m.Files() {
		if fi, err := os.Stat(a.Path); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// ErrNoLinks is the error of a message whose files are beyond its kind's
// maxAttachmentBytes while the service has no publicURL to link them on.
var ErrNoLinks = errors.New("the service has no publicURL to build download links on")

// FitFiles makes m fit limit, the maxAttachmentBytes of its kind, whose
// configuration key is key (such as "smtp.maxAttachmentBytes"): a message
// whose files weigh more than limit in total is sent without them, with a
// download link each, and says so in one line at the top of its text and
// HTML; it is never sent without the files nor their links. Without links
// (no publicURL) that is a permanent error. It reports whether the files
// were taken off.
func FitFiles(m *Message, limit int64, key string) (bool, error) {
	size := FilesSize(*m)
	files := m.Files()
	if limit <= 0 || size <= limit || len(files) == 0 {
		return false, nil
	}
	if len(m.Links.Files) < len(files) {
		return false, Permanent(fmt.Errorf("the attachments (%s) are larger than %s (%s), and %w",
			sizeText(size), key, sizeText(limit), ErrNoLinks))
	}
	line := OversizeLine(size, limit, m.Links.Files[0].Expires)
	var text, htm strings.Builder
	text.WriteString(line + "\n")
	htm.WriteString("<p>" + html.EscapeString(line) + "</p><ul>")
	for _, l := range m.Links.Files[:len(files)] {
		text.WriteString("- " + l.Name + ": " + l.URL + "\n")
		htm.WriteString(`<li><a href="` + html.EscapeString(l.URL) + `">` + html.EscapeString(l.Name) + "</a></li>")
	}
	htm.WriteString("</ul>")
	m.Text = text.String() + "\n" + m.Text
	if m.HTML != "" {
		m.HTML = htm.String() + m.HTML
	}
	kept := m.Attachments[:0:0]
	for _, a := range m.Attachments {
		if a.ContentID != "" {
			kept = append(kept, a)
		}
	}
	m.Attachments = kept
	return true, nil
}

// OversizeLine is the line a message carries when its files travel as
// download links.
func OversizeLine(size, limit int64, expires time.Time) string {
	return fmt.Sprintf("The attachments (%s) are larger than this channel takes (%s): download them with the links below until %s.",
		sizeText(size), sizeText(limit), expires.UTC().Format("2006-01-02 15:04 MST"))
}

// sizeText writes a size in MiB with one decimal, or in bytes below 1 MiB.
func sizeText(n int64) string {
	if n < MiB {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/MiB)
}
