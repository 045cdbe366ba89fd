package channeltest_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels/channeltest"
)

const mixed = "From: Herald <herald@example.com>\r\n" +
	"To: Ops <ops@example.com>, dev@example.com\r\n" +
	"Subject: =?UTF-8?q?Tr=C5=BEby_klesly?=\r\n" +
	"Message-ID: <d1@example.com>\r\n" +
	"Date: Sun, 01 Mar 2026 08:00:00 +0000\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=outer\r\n" +
	"\r\n" +
	"--outer\r\n" +
	"Content-Type: multipart/alternative; boundary=inner\r\n" +
	"\r\n" +
	"--inner\r\n" +
	"Content-Type: text/plain; charset=UTF-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"Revenue fell to =E2=82=AC12.\r\n" +
	"Long line that was soft=\r\n" +
	" broken.\r\n" +
	"--inner\r\n" +
	"Content-Type: text/html; charset=UTF-8\r\n" +
	"\r\n" +
	"<p>Revenue fell.</p>\r\n" +
	"--inner--\r\n" +
	"--outer\r\n" +
	"Content-Type: text/csv; name=\"r.csv\"\r\n" +
	"Content-Disposition: attachment; filename=\"=?UTF-8?q?Report_=C5=BE.csv?=\"\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"YSxi\r\nCjEs\r\nMgo=\r\n" +
	"--outer--\r\n"

func TestParseEmail(t *testing.T) {
	t.Parallel()
	e, err := channeltest.ParseEmail([]byte(mixed))
	if err != nil {
		t.Fatalf("ParseEmail: %v", err)
	}
	checks := []struct{ name, got, want string }{
		{"Subject", e.Subject, "Tržby klesly"},
		{"Message-ID", e.MessageID, "<d1@example.com>"},
		{"From", e.From, "herald@example.com"},
		{"To", strings.Join(e.To, ","), "ops@example.com,dev@example.com"},
		{"Text", e.Text, "Revenue fell to €12.\nLong line that was soft broken."},
		{"HTML", e.HTML, "<p>Revenue fell.</p>"},
		{"Date", e.Date.UTC().Format("2006-01-02 15:04"), "2026-03-01 08:00"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(e.Attachments) != 1 {
		t.Fatalf("%d attachments, want 1", len(e.Attachments))
	}
	if a := e.Attachments[0]; a.Name != "Report ž.csv" || a.ContentType != "text/csv" || string(a.Data) != "a,b\n1,2\n" {
		t.Errorf("attachment = %q %q %q", a.Name, a.ContentType, a.Data)
	}
}

func TestParseEmailSinglePart(t *testing.T) {
	t.Parallel()
	raw := "Subject: plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nA =3D B\r\n"
	e, err := channeltest.ParseEmail([]byte(raw))
	if err != nil {
		t.Fatalf("ParseEmail: %v", err)
	}
	if e.Subject != "plain" || e.Text != "A = B\n" {
		t.Fatalf("got subject %q text %q", e.Subject, e.Text)
	}
}

func TestParseEmailRejects(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"malformed header":       "not a header line\r\n\r\nbody",
		"bad content type":       "Content-Type: multipart/\r\n\r\nx",
		"multipart, no boundary": "Content-Type: multipart/mixed\r\n\r\nx",
		"nested too deep": "Content-Type: multipart/mixed; boundary=b\r\n\r\n" +
			strings.Repeat("--b\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n", 12),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := channeltest.ParseEmail([]byte(raw)); err == nil {
				t.Fatal("ParseEmail accepted it")
			}
		})
	}
}

func FuzzParseEmail(f *testing.F) {
	f.Add([]byte(mixed))
	f.Add([]byte("Subject: x\r\n\r\nbody"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Transfer-Encoding: base64\r\n\r\n!!\r\n--b--"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := channeltest.ParseEmail(raw)
		if err != nil {
			return
		}
		if strings.Contains(e.Text, "\r") || strings.Contains(e.HTML, "\r") {
			t.Fatalf("line breaks not normalised: %q %q", e.Text, e.HTML)
		}
	})
}
