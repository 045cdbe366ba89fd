package channels

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFitFiles: files beyond the limit in total travel as links, with one
// line saying so; without links the message is refused for good, never
// sent empty; files within the limit stay attached.
func TestFitFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big, chart := filepath.Join(dir, "big"), filepath.Join(dir, "chart")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(chart, make([]byte, 10), 0o600); err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	msg := func(links bool) Message {
		m := Message{Text: "Revenue", HTML: "<p>Revenue</p>", Attachments: []Attachment{
			{Name: "r.pdf", Path: big}, {Name: "c.png", Path: chart, ContentID: "chart-1@herald"}}}
		if links {
			m.Links.Files = []FileLink{{Name: "r.pdf", URL: "https://h.test/f/x.0.y", Expires: exp}}
		}
		return m
	}

	m := msg(true)
	if over, err := FitFiles(&m, 4096, "smtp.maxAttachmentBytes"); over || err != nil || len(m.Attachments) != 2 {
		t.Fatalf("within the limit: over %v, %v, %d attachments", over, err, len(m.Attachments))
	}
	over, err := FitFiles(&m, 1024, "smtp.maxAttachmentBytes")
	if !over || err != nil {
		t.Fatalf("beyond the limit: over %v, %v", over, err)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].ContentID == "" {
		t.Errorf("attachments left: %+v; want the inline image only", m.Attachments)
	}
	first, _, _ := strings.Cut(m.Text, "\n")
	if !strings.Contains(first, "larger than this channel takes (1024 bytes)") || !strings.Contains(m.Text, "- r.pdf: https://h.test/f/x.0.y") ||
		!strings.HasSuffix(m.Text, "Revenue") || !strings.Contains(m.HTML, `<a href="https://h.test/f/x.0.y">r.pdf</a>`) {
		t.Errorf("text %q, HTML %q", m.Text, m.HTML)
	}

	m = msg(false)
	_, err = FitFiles(&m, 1024, "smtp.maxAttachmentBytes")
	if !IsPermanent(err) || !errors.Is(err, ErrNoLinks) || !strings.Contains(err.Error(), "smtp.maxAttachmentBytes") {
		t.Errorf("without links: %v", err)
	}
}
