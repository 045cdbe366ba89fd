package teams

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/egress"
)

// Kind is the Microsoft Teams channel kind.
const Kind channels.Kind = "teams"

// Target is a Teams channel's configuration as it is kept and shown: the
// host of its workflow's URL. The URL itself carries the workflow's
// signature, so it is the channel's secret, on the wire as "url":
// {"teamsConfiguration":{"url":"https://….logic.azure.com/workflows/…"}}.
type Target struct {
	Host string `json:"host"`
}

// Settings is the teams section of the configuration. Where a workflow URL
// may reach is the webhook section's: webhook.allowNetworks.
type Settings struct {
	// Concurrency (default 16), Rate (sends per second, default 0: no
	// limit), PerDestination (sends to one workflow at once, default 4) and
	// PerOwner (sends of one owner at once, default 8).
	channels.Limits `yaml:",inline"`
	// Egress gives the guard's configuration; Link points it at the webhook
	// section's. nil means https to public addresses only. Not
	// configurable: tests set it.
	Egress func() egress.Config `yaml:"-"`
}

// DefaultSettings returns the teams section's defaults.
func DefaultSettings() *Settings {
	return &Settings{Limits: channels.Limits{Concurrency: 16, PerDestination: 4, PerOwner: 8}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error { return s.Limits.Validate() }

// Link reads where a workflow URL may reach from the webhook section.
func (s *Settings) Link(section func(key string) channels.Settings) {
	if w, ok := section("webhook").(interface{ Egress() egress.Config }); ok {
		s.Egress = w.Egress
	}
}

// guard is the guard of the settings' egress, its refusals naming the kind.
func (s *Settings) guard() *egress.Guard {
	c := egress.Config{Key: "webhook.allowNetworks"}
	if s.Egress != nil {
		c = s.Egress()
	}
	c.Name, c.Example = "teams", example
	c.NoCredentials = "the workflow's signature is in its query"
	return egress.New(c)
}

const example = "https://prod-00.westeurope.logic.azure.com/workflows/…/triggers/manual/paths/invoke?…"

// settingsOf returns the kind's settings from s, or the defaults.
func settingsOf(s channels.Settings) *Settings {
	if set, ok := s.(*Settings); ok && set != nil {
		return set
	}
	return DefaultSettings()
}

// Descriptor registers the Teams kind.
var Descriptor = channels.Descriptor{
	Kind:    Kind,
	Wire:    "teamsConfiguration",
	Title:   "Microsoft Teams",
	Secret:  "url",
	Section: "teams",
	Fields: []channels.Field{
		{Key: "url", Label: "Workflow URL (“When a Teams webhook request is received”)", Type: "password", Placeholder: "https://….logic.azure.com/workflows/…"},
	},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(_ channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		// "host" is what the API shows; a client echoes it back, and it is
		// set anew from the URL.
		var t Target
		if err := channels.DecodeStrict(config, &t); err != nil {
			return nil, err
		}
		return channels.Encode(Target{}), nil
	},
	ParseSecret: func(set channels.Settings, _ json.RawMessage, secret string) (json.RawMessage, error) {
		u, err := settingsOf(set).guard().CheckURL(strings.TrimSpace(secret))
		if err != nil {
			return nil, err
		}
		return channels.Encode(Target{Host: strings.ToLower(u.Host)}), nil
	},
	Recipient: func(config json.RawMessage) string {
		var t Target
		_ = json.Unmarshal(config, &t)
		return t.Host
	},
	NewSender: func(set channels.Settings, env channels.Env) (channels.Sender, func() error, error) {
		s, err := New(settingsOf(set), env)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	},
}

// destination names a workflow by its URL's host and a digest of its path,
// never its query, which holds the signature.
func destination(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	return fmt.Sprintf("%s %s", strings.ToLower(u.Host), channels.Digest(u.Path))
}
