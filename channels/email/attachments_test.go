package email

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
)

func TestEncodeBase64(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 56, 57, 58, 57 * 64, 57*64 + 1, 100_000} {
		src := make([]byte, n)
		_, _ = rand.Read(src)
		var out bytes.Buffer
		if err := encodeBase64(&out, bytes.NewReader(src)); err != nil {
			t.Fatal(err)
		}
		if got, want := int64(out.Len()), encodedLen(int64(n)); got != want {
			t.Errorf("%d bytes: %d bytes of base64, encodedLen says %d", n, got, want)
		}
		text := out.String()
		if n > 0 && !strings.HasSuffix(text, "\r\n") {
			t.Errorf("%d bytes: the last line does not end in CRLF", n)
		}
		lines := strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n")
		for i, l := range lines {
			if len(l) > 76 || (i < len(lines)-1 && len(l) != 76) {
				t.Fatalf("%d bytes: line %d is %d characters", n, i, len(l))
			}
		}
		got, err := base64.StdEncoding.DecodeString(strings.Join(lines, ""))
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%d bytes: decode gives %d bytes, %v", n, len(got), err)
		}
	}
}

func TestEncodedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	write := func(t *testing.T, name, content string, modified time.Time) (string, os.FileInfo) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, modified, modified); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return path, info
	}
	decoded := func(b []byte) string {
		d, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(b), "\r\n", ""))
		return string(d)
	}

	t.Run("encoded once", func(t *testing.T) {
		c := newEncodedFiles(1 << 20)
		path, info := write(t, "report.pdf", "first", at)
		if got := decoded(c.get(path, info)); got != "first" {
			t.Fatalf("first get: %q", got)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if got := decoded(c.get(path, info)); got != "first" {
			t.Errorf("get after the file went: %q; want it kept", got)
		}
	})
	t.Run("written again", func(t *testing.T) {
		c := newEncodedFiles(1 << 20)
		path, info := write(t, "report.xlsx", "first", at)
		c.get(path, info)
		path, info = write(t, "report.xlsx", "again", at.Add(time.Second)) // the same size
		if got := decoded(c.get(path, info)); got != "again" {
			t.Errorf("get of the file written again: %q", got)
		}
	})
	t.Run("too big to keep", func(t *testing.T) {
		c := newEncodedFiles(96)
		path, info := write(t, "big.csv", strings.Repeat("x", 10), at) // 18 bytes encoded, over 96/8
		if b := c.get(path, info); b != nil {
			t.Errorf("kept %d bytes of a file over an eighth of the bound", len(b))
		}
	})
	t.Run("bounded", func(t *testing.T) {
		c := newEncodedFiles(96)
		for i := range 10 {
			path, info := write(t, "f"+string(rune('a'+i)), "123456", at) // 10 bytes encoded
			if got := decoded(c.get(path, info)); got != "123456" {
				t.Fatalf("file %d: %q", i, got)
			}
			if c.size > c.max {
				t.Fatalf("holds %d bytes, over its %d", c.size, c.max)
			}
		}
	})
	t.Run("asked at once, encoded once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newEncodedFiles(1 << 20)
			path, info := write(t, "burst.pdf", "shared", at)
			release := make(chan struct{})
			var encodings atomic.Int32
			c.encode = func(w io.Writer, path string) error {
				encodings.Add(1)
				<-release
				return encodeFile(w, path)
			}
			got := make([]string, 8)
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() { got[i] = decoded(c.get(path, info)) })
			}
			synctest.Wait() // every send asking, the first encoding
			close(release)
			wg.Wait()
			if encodings.Load() != 1 || slices.ContainsFunc(got, func(s string) bool { return s != "shared" }) {
				t.Errorf("%d encodings for %d sends at once, which got %q", encodings.Load(), len(got), got)
			}
		})
	})
	t.Run("changed since its stat", func(t *testing.T) {
		c := newEncodedFiles(1 << 20)
		path, info := write(t, "moving.pdf", "short", at)
		if err := os.WriteFile(path, []byte("longer now"), 0o600); err != nil {
			t.Fatal(err)
		}
		if b := c.get(path, info); b != nil {
			t.Error("kept a file whose size is not its stat's")
		}
	})
}

// TestFilesTravelWhole composes a mail with a text body, an HTML one with an
// inline image, and attachments kept encoded and encoded as written, and
// reads it back as a mail client would.
func TestFilesTravelWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := make([]byte, 40_000)
	_, _ = rand.Read(big)
	files := map[string][]byte{
		"report.pdf": []byte("%PDF-1.4 report\r\n.\r\nend"),
		"data.bin":   big,
		"chart.png":  []byte("\x89PNG\r\n\x1a\n image"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := newComposer("Herald <alerts@example.com>", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.files = newEncodedFiles(100_000) // data.bin is over an eighth of it: encoded as written
	m := channels.Message{
		DeliveryID: "sub-1.2026-03-01T08-00-00Z.c1",
		Channel:    channels.Channel{ID: "c1", Kind: Kind, Config: []byte(`{"to":"ops@example.com"}`)},
		Subject:    "Tržby: report",
		Text:       "Revenue fell.\n",
		HTML:       `<p>Revenue fell.</p><img src="cid:chart-1@herald">`,
		Attachments: []channels.Attachment{
			{Name: "Tržby \"Q1\".pdf", ContentType: "application/pdf", Path: filepath.Join(dir, "report.pdf")},
			{Name: "data.bin", Path: filepath.Join(dir, "data.bin")},
			{Name: "chart.png", ContentType: "image/png", Path: filepath.Join(dir, "chart.png"), ContentID: "chart-1@herald"},
		},
	}
	msg, err := c.compose(m)
	if err != nil {
		t.Fatal(err)
	}
	var first, second bytes.Buffer
	if _, err := msg.WriteTo(&first); err != nil {
		t.Fatal(err)
	}
	if _, err := msg.WriteTo(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Error("two writes of the message differ")
	}
	e, err := channeltest.ParseEmail(first.Bytes())
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, first.Bytes())
	}
	if e.Subject != m.Subject || e.Text != m.Text || !strings.Contains(e.HTML, "cid:chart-1@herald") {
		t.Errorf("subject %q, text %q, html %q", e.Subject, e.Text, e.HTML)
	}
	want := []struct {
		name, ctype string
		data        []byte
		inline      bool
	}{
		{"chart.png", "image/png", files["chart.png"], true},
		{"Tržby _Q1_.pdf", "application/pdf", files["report.pdf"], false},
		{"data.bin", "application/octet-stream", files["data.bin"], false},
	}
	if len(e.Attachments) != len(want) {
		t.Fatalf("%d files, want %d: %+v", len(e.Attachments), len(want), e.Attachments)
	}
	for i, w := range want {
		a := e.Attachments[i]
		if a.Name != w.name || !strings.HasPrefix(a.ContentType, w.ctype) || !bytes.Equal(a.Data, w.data) || a.Inline != w.inline {
			t.Errorf("file %d: %q %q inline %v, %d bytes; want %q %q inline %v, %d bytes",
				i, a.Name, a.ContentType, a.Inline, len(a.Data), w.name, w.ctype, w.inline, len(w.data))
		}
	}
	if head, _, _ := bytes.Cut(first.Bytes(), []byte("\r\n\r\n")); bytes.Count(head, []byte("Content-Type:")) != 1 ||
		!bytes.Contains(head, []byte("Content-Type: multipart/mixed;")) {
		t.Errorf("the header's Content-Type is not the one multipart/mixed:\n%s", head)
	}
	for _, want := range []string{"Content-Type: multipart/related; type=\"multipart/alternative\";\r\n boundary=", "Content-Id: <chart-1@herald>\r\n"} {
		if !bytes.Contains(first.Bytes(), []byte(want)) {
			t.Errorf("the message has no %q", want)
		}
	}
	// A file encoded as the mail is written is read then: gone, it fails
	// the write, which the sender tries again.
	if err := os.Remove(filepath.Join(dir, "data.bin")); err != nil {
		t.Fatal(err)
	}
	if _, err := msg.WriteTo(io.Discard); err == nil {
		t.Error("the message was written without a file it attaches")
	}
}

// TestMessageShapes composes mails with and without an HTML body, inline
// images and attached files, and reads each back as a mail client would:
// every body and file arrives whole, in its place, and the top-level
// Content-Type is the outermost multipart the mail needs.
func TestMessageShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	png, pdf := filepath.Join(dir, "chart.png"), filepath.Join(dir, "report.pdf")
	for path, b := range map[string]string{png: "\x89PNG image", pdf: "%PDF-1.4 report"} {
		if err := os.WriteFile(path, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	image := channels.Attachment{Name: "chart.png", ContentType: "image/png", Path: png, ContentID: "chart-1@herald"}
	file := channels.Attachment{Name: "report.pdf", ContentType: "application/pdf", Path: pdf}
	for _, tc := range []struct {
		name        string
		text, html  string
		attachments []channels.Attachment
		top         string // the top-level Content-Type's media type
		want        []string
	}{
		{"text", "Revenue fell.\n", "", nil, "multipart/alternative", nil},
		{"text and a file", "Revenue fell.\n", "", []channels.Attachment{file}, "multipart/mixed", []string{"report.pdf"}},
		{"an image without HTML is left out", "Revenue fell.\n", "", []channels.Attachment{image}, "multipart/alternative", nil},
		{"HTML and an image", "", `<img src="cid:chart-1@herald">`, []channels.Attachment{image}, "multipart/related", []string{"chart.png"}},
		{"text, HTML and an image", "Revenue fell.\n", `<img src="cid:chart-1@herald">`, []channels.Attachment{image},
			"multipart/related", []string{"chart.png"}},
		{"all", "Revenue fell.\n", `<img src="cid:chart-1@herald">`, []channels.Attachment{file, image},
			"multipart/mixed", []string{"chart.png", "report.pdf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := newComposer("Herald <alerts@example.com>", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := c.compose(channels.Message{DeliveryID: "d1", Subject: "Revenue", Text: tc.text, HTML: tc.html,
				Channel:     channels.Channel{ID: "c1", Kind: Kind, Config: []byte(`{"to":"ops@example.com"}`)},
				Attachments: tc.attachments})
			if err != nil {
				t.Fatal(err)
			}
			var raw bytes.Buffer
			if _, err := msg.WriteTo(&raw); err != nil {
				t.Fatal(err)
			}
			e, err := channeltest.ParseEmail(raw.Bytes())
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, raw.Bytes())
			}
			if top, _, _ := mime.ParseMediaType(e.Header.Get("Content-Type")); top != tc.top {
				t.Errorf("top-level Content-Type %q, want %s", e.Header.Get("Content-Type"), tc.top)
			}
			if tc.text != "" && e.Text != tc.text {
				t.Errorf("text %q, want %q", e.Text, tc.text)
			}
			if tc.html != "" && !strings.Contains(e.HTML, tc.html) {
				t.Errorf("the HTML does not hold %q", tc.html)
			}
			var got []string
			for _, a := range e.Attachments {
				got = append(got, a.Name)
				if a.Inline != (a.ContentID != "") {
					t.Errorf("%s: inline %v with Content-ID %q", a.Name, a.Inline, a.ContentID)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("files %q, want %q", got, tc.want)
			}
		})
	}
}
