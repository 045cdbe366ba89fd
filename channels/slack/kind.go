package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"

	"github.com/heraldhq/herald/channels"
)

// Kind is the Slack channel kind.
const Kind channels.Kind = "slack"

// Target is a Slack channel's configuration: the conversation the messages
// go to, by id. The bot token is the channel's secret, on the wire as
// "token": {"slackConfiguration":{"channel":"C0123ABCD","token":"xoxb-…"}}.
type Target struct {
	Channel string `json:"channel"`
}

// Settings is the slack section of the configuration; tokens are in each
// channel.
type Settings struct {
	// BaseURL of the Web API, ending in /api/. Default https://slack.com/api/;
	// another value is for tests and Slack-compatible servers.
	BaseURL string `yaml:"baseURL"`
	// MaxFileBytes is the largest attachment shared; a larger one fails the
	// delivery permanently. Default 100 MiB; Slack itself takes up to 1 GB.
	MaxFileBytes int64 `yaml:"maxFileBytes"`
	// MaxAttachmentBytes bounds a message's files in total: beyond it they
	// travel as download links (publicURL needed; without it the delivery
	// fails), and the message says so in one line. Default 100 MiB.
	MaxAttachmentBytes int64 `yaml:"maxAttachmentBytes"`
	// Concurrency (default 8), Rate (sends per second, default 0: no limit),
	// PerDestination (sends to one workspace at once, default 4) and PerOwner
	// (sends of one owner at once, default 4).
	channels.Limits `yaml:",inline"`
}

// DefaultSettings returns the slack section's defaults.
func DefaultSettings() *Settings {
	return &Settings{BaseURL: DefaultBaseURL, MaxFileBytes: DefaultMaxFileBytes, MaxAttachmentBytes: DefaultMaxFileBytes,
		Limits: channels.Limits{Concurrency: 8, PerDestination: 4, PerOwner: 4}}
}

// maxFileBytes is the largest file Slack takes.
const maxFileBytes = 1 << 30

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("baseURL: %q is not an absolute http or https URL", s.BaseURL))
	}
	if s.MaxFileBytes < 1 || s.MaxFileBytes > maxFileBytes {
		errs = append(errs, fmt.Errorf("maxFileBytes: must be from 1 to %d (1 GiB), got %d", maxFileBytes, s.MaxFileBytes))
	}
	if s.MaxAttachmentBytes < 1 {
		errs = append(errs, fmt.Errorf("maxAttachmentBytes: must be at least 1, got %d", s.MaxAttachmentBytes))
	}
	return errors.Join(append(errs, s.Limits.Validate())...)
}

// conversationID matches the id of a public channel (C…), a private
// channel (G…, or C… for newer ones) or a direct message (D…).
var conversationID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,20}$`)

// Descriptor registers the Slack kind.
var Descriptor = channels.Descriptor{
	Kind:    Kind,
	Wire:    "slackConfiguration",
	Title:   "Slack",
	Secret:  "token",
	Section: "slack",
	Fields: []channels.Field{
		{Key: "channel", Label: "Channel ID", Type: "text", Placeholder: "C0123ABCD"},
		{Key: "token", Label: "Bot token", Type: "password", Placeholder: "xoxb-…"},
	},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(_ channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		var t Target
		if err := channels.DecodeStrict(config, &t); err != nil {
			return nil, err
		}
		switch {
		case t.Channel == "":
			return nil, channels.Invalid("channel", "is required")
		case !conversationID.MatchString(t.Channel):
			return nil, channels.Invalid("channel", "must be a Slack conversation id such as C0123ABCD (a channel's name will not do)")
		}
		return channels.Encode(t), nil
	},
	Recipient: func(config json.RawMessage) string {
		var t Target
		_ = json.Unmarshal(config, &t)
		return t.Channel
	},
	NewSender: func(set channels.Settings, env channels.Env) (channels.Sender, func() error, error) {
		s := set.(*Settings)
		snd := New(Config{BaseURL: s.BaseURL, MaxFileBytes: s.MaxFileBytes, MaxAttachmentBytes: s.MaxAttachmentBytes,
			Timeout: env.SendTimeout, Logger: env.Logger,
			Conns: s.Concurrency})
		return snd, snd.Close, nil
	},
}
