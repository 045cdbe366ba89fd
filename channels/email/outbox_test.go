package email_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/email"
)

func TestOutboxWritesParseableMessage(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "outbox")
	var logs bytes.Buffer
	o := email.NewOutbox(dir, from, slog.New(slog.NewTextHandler(&logs, nil)))
	if o.Kind() != email.Kind {
		t.Fatalf("Kind() = %q", o.Kind())
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), dir) {
		t.Fatalf("NewOutbox logged %d lines, want 1 naming the folder:\n%s", n, logs.String())
	}
	att := filepath.Join(t.TempDir(), "r.csv")
	writeFile(t, att, []byte("a,b\n1,2\n"))
	m := message("sub-1.c1")
	m.Channel.Secret = "outbox-secret-never-logged"
	m.Attachments = []channels.Attachment{{Name: "r.csv", ContentType: "text/csv", Path: att}}

	id, err := o.Send(t.Context(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	e := readEML(t, o.Path(m.DeliveryID))
	if e.MessageID != id || id != "<sub-1.c1@example.com>" {
		t.Errorf("file Message-ID %q, provider id %q, want <sub-1.c1@example.com>", e.MessageID, id)
	}
	if e.Subject != m.Subject || strings.TrimRight(e.Text, "\n") != m.Text {
		t.Errorf("file has subject %q text %q", e.Subject, e.Text)
	}
	if len(e.Attachments) != 1 || string(e.Attachments[0].Data) != "a,b\n1,2\n" {
		t.Errorf("file attachments = %+v", e.Attachments)
	}
	if strings.Contains(logs.String(), m.Channel.Secret) {
		t.Errorf("log reveals the password:\n%s", logs.String())
	}
}

func TestOutboxResendOverwrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := email.NewOutbox(dir, from, nil)
	m := message("sub-1.c1")
	first, err := o.Send(t.Context(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	m.Text = "Revenue fell further."
	second, err := o.Send(t.Context(), m)
	if err != nil {
		t.Fatalf("re-send: %v", err)
	}
	if first != second {
		t.Errorf("re-send changed the Message-ID from %q to %q", first, second)
	}
	if _, err := o.Send(t.Context(), message("sub-2.c1")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := "sub-1.c1.eml sub-2.c1.eml"; strings.Join(names, " ") != want {
		t.Fatalf("outbox holds %v, want %s (no temporary files)", names, want)
	}
	if e := readEML(t, o.Path("sub-1.c1")); strings.TrimRight(e.Text, "\n") != "Revenue fell further." {
		t.Errorf("re-sent file has text %q", e.Text)
	}
}

func TestOutboxFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	cases := []struct {
		name      string
		outbox    *email.Outbox
		ctx       context.Context
		msg       channels.Message
		permanent bool
	}{
		{"cancelled context", email.NewOutbox(dir, from, nil), cancelled, message("d1"), false},
		{"bad from address", email.NewOutbox(dir, "not an address", nil), t.Context(), message("d1"), true},
		{"missing attachment", email.NewOutbox(dir, from, nil), t.Context(), func() channels.Message {
			m := message("d1")
			m.Attachments = []channels.Attachment{{Name: "x", Path: filepath.Join(dir, "missing")}}
			return m
		}(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.outbox.Send(tc.ctx, tc.msg)
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if got := channels.IsPermanent(err); got != tc.permanent {
				t.Fatalf("IsPermanent = %v, want %v (err: %v)", got, tc.permanent, err)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("failed sends left %d files", len(entries))
	}
}

func readEML(t *testing.T, path string) channeltest.Email {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := channeltest.ParseEmail(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return e
}
