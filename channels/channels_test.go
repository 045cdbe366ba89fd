package channels_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
)

const secret = "hunter2-s3cr3t-token"

func sampleChannel() channels.Channel {
	return channels.Channel{
		ID: "ch1", Kind: channels.KindSMS, To: "+420777000111", From: "+15005550006",
		Username: "AC0123", Password: secret,
	}
}

func TestChannelNeverPrintsPassword(t *testing.T) {
	ch := sampleChannel()
	msg := channels.Message{DeliveryID: "d1", Channel: ch, Subject: "s", Text: "t"}
	cases := []struct {
		name string
		out  string
	}{
		{"String", ch.String()},
		{"%v", fmt.Sprintf("%v", ch)},
		{"%+v", fmt.Sprintf("%+v", ch)},
		{"%#v", fmt.Sprintf("%#v", ch)},
		{"%s", fmt.Sprintf("%s", ch)},
		{"%q", fmt.Sprintf("%q", ch)},
		{"%x", fmt.Sprintf("%x", ch)},
		{"pointer %+v", fmt.Sprintf("%+v", &ch)},
		{"message %+v", fmt.Sprintf("%+v", msg)},
		{"message %#v", fmt.Sprintf("%#v", msg)},
		{"slice %v", fmt.Sprint([]channels.Channel{ch})},
		{"wrapped error", fmt.Errorf("send to %v: %w", ch, io.EOF).Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.out, secret) {
				t.Fatalf("output reveals the password: %s", tc.out)
			}
			if !strings.Contains(tc.out, "[redacted]") {
				t.Fatalf("output does not mark the password as redacted: %s", tc.out)
			}
			if !strings.Contains(tc.out, ch.To) {
				t.Fatalf("output lost the other fields: %s", tc.out)
			}
		})
	}
}

func TestChannelEmptyPasswordPrintsEmpty(t *testing.T) {
	ch := sampleChannel()
	ch.Password = ""
	if got := ch.String(); strings.Contains(got, "[redacted]") {
		t.Fatalf("String() = %q, want no redaction marker for an empty password", got)
	}
}

func TestLogNeverRevealsPassword(t *testing.T) {
	ch := sampleChannel()
	msg := channels.Message{DeliveryID: "d1", Channel: ch, Subject: "Revenue", Text: "fell"}
	handlers := map[string]func(io.Writer) slog.Handler{
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
	}
	for name, newHandler := range handlers {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(newHandler(&buf))
			log.Info("channel", "channel", ch)
			log.Info("message", "message", msg)
			log.Info("pointer", "channel", &ch)
			log.Info("group", slog.Group("g", "channel", ch))
			out := buf.String()
			if strings.Contains(out, secret) {
				t.Fatalf("log reveals the password:\n%s", out)
			}
			for _, want := range []string{"+420777000111", "d1", "Revenue", "[redacted]"} {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("550 mailbox unavailable")
	cases := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"permanent", channels.Permanent(base), true},
		{"wrapped permanent", fmt.Errorf("send: %w", channels.Permanent(base)), true},
		{"joined", errors.Join(io.EOF, channels.Permanent(base)), true},
		{"context", context.Canceled, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := channels.IsPermanent(tc.err); got != tc.permanent {
				t.Fatalf("IsPermanent(%v) = %v, want %v", tc.err, got, tc.permanent)
			}
		})
	}
	if channels.Permanent(nil) != nil {
		t.Fatal("Permanent(nil) is not nil")
	}
	p := channels.Permanent(base)
	if !errors.Is(p, base) || p.Error() != base.Error() {
		t.Fatalf("Permanent changed the error: %v", p)
	}
}

func TestKindValid(t *testing.T) {
	for _, k := range []channels.Kind{channels.KindEmail, channels.KindSMS, channels.KindFeedChat} {
		if !k.Valid() {
			t.Errorf("%q not valid", k)
		}
	}
	for _, k := range []channels.Kind{"", "Email", "slack"} {
		if k.Valid() {
			t.Errorf("%q valid", k)
		}
	}
}
