package slack_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/slack"
	"github.com/heraldhq/herald/channels/slack/slacktest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	parse := slack.Descriptor.Parse
	for _, ok := range []string{"C0123ABCD", "G0123ABCD", "D0123ABCD", "C01", "C0123456789ABCDEFGHIJ"} {
		got, err := parse(slack.DefaultSettings(), json.RawMessage(`{"channel":"`+ok+`"}`))
		if err != nil {
			t.Errorf("Parse(%s): %v", ok, err)
			continue
		}
		if want := `{"channel":"` + ok + `"}`; string(got) != want {
			t.Errorf("Parse(%s) = %s, want %s", ok, got, want)
		}
		if r := slack.Descriptor.Recipient(got); r != ok {
			t.Errorf("Recipient = %q, want %q", r, ok)
		}
	}
	cases := []struct {
		name, config, field string
	}{
		{"missing", `{}`, "channel"},
		{"empty", `{"channel":""}`, "channel"},
		{"a name", `{"channel":"#general"}`, "channel"},
		{"lower case", `{"channel":"c0123abcd"}`, "channel"},
		{"user id", `{"channel":"U0123ABCD"}`, "channel"},
		{"too short", `{"channel":"C0"}`, "channel"},
		{"too long", `{"channel":"C0123456789ABCDEFGHIJK"}`, "channel"},
		{"spaces", `{"channel":" C0123ABCD"}`, "channel"},
		{"not a string", `{"channel":12}`, "channel"},
		{"unknown field", `{"channel":"C0123ABCD","team":"T1"}`, "team"},
		{"token kept in", `{"channel":"C0123ABCD","token":"xoxb-1"}`, "token"},
		{"not an object", `["C0123ABCD"]`, ""},
		{"trailing data", `{"channel":"C0123ABCD"} {}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(slack.DefaultSettings(), json.RawMessage(tc.config))
			var fe *channels.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want a *channels.FieldError", err)
			}
			if fe.Field != tc.field {
				t.Fatalf("error on %q, want %q: %v", fe.Field, tc.field, err)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	def := slack.DefaultSettings()
	if err := def.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if def.BaseURL != "https://slack.com/api/" || def.MaxFileBytes != 100<<20 || def.Concurrency != 8 || def.Rate != 0 ||
		def.PerDestination != 4 || def.PerOwner != 4 {
		t.Fatalf("defaults = %+v", def)
	}
	var set slack.Settings
	src := "baseURL: http://127.0.0.1:9/api/\nmaxFileBytes: 1048576\nconcurrency: 2\nrate: 1.5\n"
	if err := yaml.Unmarshal([]byte(src), &set); err != nil {
		t.Fatal(err)
	}
	if set.BaseURL != "http://127.0.0.1:9/api/" || set.MaxFileBytes != 1<<20 || set.Concurrency != 2 || set.Rate != 1.5 {
		t.Fatalf("decoded %+v", set)
	}
	cases := []struct {
		name string
		edit func(*slack.Settings)
		key  string
	}{
		{"no base URL", func(s *slack.Settings) { s.BaseURL = "" }, "baseURL:"},
		{"relative base URL", func(s *slack.Settings) { s.BaseURL = "/api/" }, "baseURL:"},
		{"base URL not http", func(s *slack.Settings) { s.BaseURL = "ftp://slack.com/api/" }, "baseURL:"},
		{"no file size", func(s *slack.Settings) { s.MaxFileBytes = 0 }, "maxFileBytes:"},
		{"file size over Slack's", func(s *slack.Settings) { s.MaxFileBytes = 2 << 30 }, "maxFileBytes:"},
		{"no concurrency", func(s *slack.Settings) { s.Concurrency = 0 }, "concurrency:"},
		{"negative rate", func(s *slack.Settings) { s.Rate = -1 }, "rate:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := slack.DefaultSettings()
			tc.edit(s)
			err := s.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.key) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tc.key)
			}
		})
	}
}

func TestDescriptor(t *testing.T) {
	t.Parallel()
	reg, err := channels.NewRegistry(slack.Descriptor)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := reg.ByWire("slackConfiguration")
	if !ok || d.Kind != "slack" || d.Secret != "token" || d.Section != "slack" || d.Title != "Slack" {
		t.Fatalf("descriptor = %+v", d)
	}
	srv := slacktest.New(t)
	set := d.Settings().(*slack.Settings)
	set.BaseURL = srv.URL()
	snd, closer, err := d.NewSender(set, channels.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := closer(); err != nil {
			t.Error(err)
		}
	}()
	config, err := d.Parse(set, json.RawMessage(`{"channel":"`+srv.ChannelID()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	ch := channels.Channel{ID: "c1", Kind: d.Kind, Config: config, Secret: srv.Token()}
	if _, err := snd.Send(t.Context(), message(ch, "d1")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if snd.Kind() != slack.Kind || len(srv.Messages()) != 1 {
		t.Fatalf("kind %q, %d messages", snd.Kind(), len(srv.Messages()))
	}
}
