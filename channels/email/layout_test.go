package email_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/email"
)

// outboxMail sends m through an outbox and parses the written message.
func outboxMail(t *testing.T, m channels.Message) channeltest.Email {
	t.Helper()
	dir := t.TempDir()
	o := email.NewOutbox(dir, from, nil)
	if _, err := o.Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	raw, err := os.ReadFile(o.Path(m.DeliveryID))
	if err != nil {
		t.Fatal(err)
	}
	e, err := channeltest.ParseEmail(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFooterAndOneClickUnsubscribe(t *testing.T) {
	t.Parallel()
	m := message("run-1.c1")
	m.HTML = "<p>Revenue <b>fell</b>.</p>"
	m.Source = channels.Source{SubscriptionTitle: "Revenue watch <daily>"}
	m.Links = channels.Links{Unsubscribe: "https://herald.example.com/unsubscribe/s.c.r.sig"}
	e := outboxMail(t, m)
	if got := e.Header.Get("List-Unsubscribe"); got != "<https://herald.example.com/unsubscribe/s.c.r.sig>" {
		t.Errorf("List-Unsubscribe = %q", got)
	}
	if got := e.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post = %q", got)
	}
	for _, want := range []string{"Revenue watch &lt;daily&gt;", `href="https://herald.example.com/unsubscribe/s.c.r.sig"`, m.HTML} {
		if !strings.Contains(e.HTML, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if !strings.Contains(e.Text, "\n-- \nYou get this mail because the Herald subscription “Revenue watch <daily>” sends to ops@example.com.") ||
		!strings.HasSuffix(strings.TrimSpace(e.Text), "Unsubscribe: https://herald.example.com/unsubscribe/s.c.r.sig") {
		t.Errorf("text footer:\n%s", e.Text)
	}
}

// TestPlainHTTPUnsubscribeIsNotOneClick: RFC 8058 allows one-click only over
// https, so an http link is named without List-Unsubscribe-Post.
func TestPlainHTTPUnsubscribeIsNotOneClick(t *testing.T) {
	t.Parallel()
	m := message("run-2.c1")
	m.Links = channels.Links{Unsubscribe: "http://herald.internal/unsubscribe/t"}
	e := outboxMail(t, m)
	if e.Header.Get("List-Unsubscribe") != "<http://herald.internal/unsubscribe/t>" || e.Header.Get("List-Unsubscribe-Post") != "" {
		t.Errorf("List-Unsubscribe %q, List-Unsubscribe-Post %q", e.Header.Get("List-Unsubscribe"), e.Header.Get("List-Unsubscribe-Post"))
	}
}

// TestInlineImageGoesWithTheHTML: an image the HTML shows is an inline part
// with its Content-ID; without an HTML body it is left out.
func TestInlineImageGoesWithTheHTML(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	png := filepath.Join(dir, "chart.png")
	writeFile(t, png, []byte("\x89PNG\r\n\x1a\n"))
	m := message("run-3.c1")
	m.HTML = `<img src="cid:chart-1@herald">`
	m.Attachments = []channels.Attachment{{Name: "chart.png", ContentType: "image/png", Path: png, ContentID: "chart-1@herald"}}
	e := outboxMail(t, m)
	if len(e.Attachments) != 1 || e.Attachments[0].ContentID != "chart-1@herald" || !e.Attachments[0].Inline ||
		!bytes.HasPrefix(e.Attachments[0].Data, []byte("\x89PNG")) {
		t.Fatalf("parts = %+v", e.Attachments)
	}
	m.DeliveryID, m.HTML = "run-4.c1", ""
	if e := outboxMail(t, m); len(e.Attachments) != 0 {
		t.Errorf("a mail without an HTML body carries %d parts", len(e.Attachments))
	}
}

// TestTextOnlyMessageHasAnHTMLPart: a message without HTML is shown in the
// mail's page as its text, escaped, with the footer.
func TestTextOnlyMessageHasAnHTMLPart(t *testing.T) {
	t.Parallel()
	m := message("run-5.c1")
	m.Text = "Revenue <fell>.\n\nSee the report."
	e := outboxMail(t, m)
	if !strings.HasPrefix(e.Text, m.Text) || !strings.Contains(e.HTML, ">Revenue &lt;fell&gt;.</p>") ||
		!strings.Contains(e.HTML, ">See the report.</p>") {
		t.Errorf("text %q, HTML:\n%s", e.Text, e.HTML)
	}
}
