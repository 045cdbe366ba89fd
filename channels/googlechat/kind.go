package googlechat

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/heraldhq/herald/channels"
)

// Kind is the Google Chat channel kind.
const Kind channels.Kind = "googlechat"

// DefaultBaseURL is the default of Settings.BaseURL: Google Chat's API.
const DefaultBaseURL = "https://chat.googleapis.com"

// MaxURL is the longest webhook URL, in bytes.
const MaxURL = 2048

// Target is a Google Chat channel's configuration as it is kept and shown:
// the host of its webhook's URL. The URL carries the webhook's key and
// token, so it is the channel's secret, on the wire as "url":
// {"googleChatConfiguration":{"url":"https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…"}}.
type Target struct {
	Host string `json:"host"`
}

// Settings is the googleChat section of the configuration.
type Settings struct {
	// BaseURL is where messages go: Google Chat's API, or a proxy or a
	// test's server. A webhook URL must be on chat.googleapis.com or on
	// BaseURL's host; its path and query are sent to BaseURL. Default
	// https://chat.googleapis.com.
	BaseURL string `yaml:"baseURL"`
	// Concurrency (default 16), Rate (sends per second, default 0: no
	// limit), PerDestination (sends to one space at once, default 4) and
	// PerOwner (sends of one owner at once, default 8).
	channels.Limits `yaml:",inline"`
}

// DefaultSettings returns the googleChat section's defaults.
func DefaultSettings() *Settings {
	return &Settings{BaseURL: DefaultBaseURL, Limits: channels.Limits{Concurrency: 16, PerDestination: 4, PerOwner: 8}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	if _, err := parseBase(s.BaseURL); err != nil {
		errs = append(errs, fmt.Errorf("baseURL: %w", err))
	}
	return errors.Join(append(errs, s.Limits.Validate())...)
}

// parseBase parses a base URL: absolute http or https, without user, query
// or fragment.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q is not an absolute http or https URL without a query", raw)
	}
	return u, nil
}

// settingsOf returns the kind's settings from s, or the defaults.
func settingsOf(s channels.Settings) *Settings {
	if set, ok := s.(*Settings); ok && set != nil {
		return set
	}
	return DefaultSettings()
}

const example = "https://chat.googleapis.com/v1/spaces/AAAA…/messages?key=…&token=…"

// spacePath is the path of a space's messages.
var spacePath = regexp.MustCompile(`^/v1/spaces/[A-Za-z0-9_-]{1,128}/messages$`)

// checkURL validates a webhook URL under base; errors are *channels.FieldError
// on "url".
func checkURL(base *url.URL, raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return nil, channels.Invalid("url", "is required")
	case len(raw) > MaxURL:
		return nil, channels.Invalid("url", "must be at most %d characters", MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.User != nil || u.Fragment != "" {
		return nil, channels.Invalid("url", "must be a Google Chat webhook URL, such as %s", example)
	}
	host := strings.ToLower(u.Host)
	google := u.Scheme == "https" && (host == "chat.googleapis.com" || host == "chat.googleapis.com:443")
	if !google && (base == nil || u.Scheme != base.Scheme || host != strings.ToLower(base.Host)) {
		return nil, channels.Invalid("url", "must be on https://chat.googleapis.com (or googleChat.baseURL), such as %s", example)
	}
	if !spacePath.MatchString(u.Path) {
		return nil, channels.Invalid("url", "must be a space's messages, /v1/spaces/<space>/messages, such as %s", example)
	}
	q := u.Query()
	if q.Get("key") == "" || q.Get("token") == "" {
		return nil, channels.Invalid("url", "must hold the webhook's key and token, as Google Chat gives the URL")
	}
	return u, nil
}

// Descriptor registers the Google Chat kind.
var Descriptor = channels.Descriptor{
	Kind:    Kind,
	Wire:    "googleChatConfiguration",
	Title:   "Google Chat",
	Secret:  "url",
	Section: "googleChat",
	Fields: []channels.Field{
		{Key: "url", Label: "Webhook URL of the space", Type: "password", Placeholder: example},
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
		base, _ := parseBase(settingsOf(set).BaseURL)
		u, err := checkURL(base, secret)
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
