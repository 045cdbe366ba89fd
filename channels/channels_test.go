package channels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
)

const secret = "hunter2-s3cr3t-token"

func sampleChannel() channels.Channel {
	return channels.Channel{
		ID: "ch1", Kind: "sms", Secret: secret,
		Config: json.RawMessage(`{"username":"AC0123","from":"+15005550006","to":"+420777000111"}`),
	}
}

func TestChannelNeverPrintsPassword(t *testing.T) {
	t.Parallel()
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
			if !strings.Contains(tc.out, "+420777000111") {
				t.Fatalf("output lost the other fields: %s", tc.out)
			}
		})
	}
}

func TestChannelEmptyPasswordPrintsEmpty(t *testing.T) {
	t.Parallel()
	ch := sampleChannel()
	ch.Secret = ""
	if got := ch.String(); strings.Contains(got, "[redacted]") {
		t.Fatalf("String() = %q, want no redaction marker for an empty password", got)
	}
}

func TestLogNeverRevealsPassword(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

func TestRegistryRefusesDuplicatesAndGaps(t *testing.T) {
	t.Parallel()
	kind := func(name, wire, section string) channels.Descriptor {
		return channels.Descriptor{Kind: channels.Kind(name), Wire: wire, Title: name, Section: section,
			Settings:  func() channels.Settings { return &channels.Limits{Concurrency: 1} },
			Parse:     func(channels.Settings, json.RawMessage) (json.RawMessage, error) { return nil, nil },
			Recipient: func(json.RawMessage) string { return "" },
			NewSender: func(channels.Settings, channels.Env) (channels.Sender, func() error, error) { return nil, nil, nil },
		}
	}
	r, err := channels.NewRegistry(kind("a", "aConfiguration", "a"), kind("b", "bConfiguration", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := r.ByWire("bConfiguration"); !ok || d.Kind != "b" {
		t.Fatalf("ByWire = %v, %v", d, ok)
	}
	if _, ok := r.Lookup("c"); ok {
		t.Fatal("Lookup found an unregistered kind")
	}
	if got := r.Wires(); len(got) != 2 || got[0] != "aConfiguration" {
		t.Fatalf("Wires = %v, want registration order", got)
	}
	for name, ds := range map[string][]channels.Descriptor{
		"same kind":    {kind("a", "x", "x"), kind("a", "y", "y")},
		"same wire":    {kind("a", "x", "x"), kind("b", "x", "y")},
		"same section": {kind("a", "x", "s"), kind("b", "y", "s")},
		"no wire":      {kind("a", "", "s")},
	} {
		if _, err := channels.NewRegistry(ds...); err == nil {
			t.Errorf("%s: NewRegistry accepted it", name)
		}
	}
}

func TestDecodeStrictNamesTheField(t *testing.T) {
	t.Parallel()
	var v struct {
		To string `json:"to"`
	}
	var fe *channels.FieldError
	if err := channels.DecodeStrict(json.RawMessage(`{"to":"a","cc":"b"}`), &v); !errors.As(err, &fe) || fe.Field != "cc" {
		t.Fatalf("unknown field: %v", err)
	}
	if err := channels.DecodeStrict(json.RawMessage(`{"to":5}`), &v); !errors.As(err, &fe) || fe.Field != "to" {
		t.Fatalf("wrong type: %v", err)
	}
	if err := channels.DecodeStrict(json.RawMessage(`{"to":"a"}`), &v); err != nil || v.To != "a" {
		t.Fatalf("good: %v %q", err, v.To)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("send: %w", channels.RetryAfter(errors.New("429"), 7*time.Second))
	if d, ok := channels.RetryDelay(err); !ok || d != 7*time.Second || channels.IsPermanent(err) {
		t.Fatalf("RetryDelay = %v, %v", d, ok)
	}
	if _, ok := channels.RetryDelay(errors.New("x")); ok {
		t.Fatal("RetryDelay found a delay on a plain error")
	}
	if channels.RetryAfter(nil, time.Second) != nil {
		t.Fatal("RetryAfter(nil) is not nil")
	}
}

func TestTextHTML(t *testing.T) {
	t.Parallel()
	got := channels.TextHTML("Revenue <fell> & rose.\nTwice.\n\n\nSee \"the\" report.\r\n")
	if strings.Count(got, "<p ") != 2 || !strings.Contains(got, ">Revenue &lt;fell&gt; &amp; rose.<br>Twice.</p>") ||
		!strings.Contains(got, ">See &#34;the&#34; report.</p>") {
		t.Errorf("TextHTML = %s", got)
	}
	if channels.TextHTML("\n\n") != "" {
		t.Errorf("blank text gives paragraphs")
	}
}

func TestEnvDefaultsFillOnlyWhatIsLeftOut(t *testing.T) {
	t.Parallel()
	env := channels.Env{}.Defaults(30 * time.Second)
	if env.SendTimeout != 30*time.Second || env.Clock == nil || env.Logger == nil {
		t.Errorf("empty env: %+v", env)
	}
	at := time.Unix(1, 0)
	given := channels.Env{SendTimeout: time.Second, Clock: clock.NowFrom(func() time.Time { return at }), Logger: slog.Default()}
	env = given.Defaults(30 * time.Second)
	if env.SendTimeout != time.Second || !env.Clock.Now().Equal(at) || env.Logger != slog.Default() {
		t.Errorf("a given env changed: %+v", env)
	}
}
