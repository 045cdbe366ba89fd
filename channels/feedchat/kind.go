package feedchat

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/channels"
)

// Kind is the feed chat channel kind.
const Kind channels.Kind = "feedchat"

// Account is a feed chat channel's configuration: the user whose feed gets
// the posts. The password with the security token is the channel's secret:
// {"feedChatConfiguration":{"username":"jane@example.com","password":"…"}}.
type Account struct {
	Username string `json:"username"`
}

// Settings is the feedChat section of the configuration; user names and
// passwords are in each channel.
type Settings struct {
	// LoginURL of the OAuth server. Default https://login.salesforce.com.
	LoginURL string `yaml:"loginURL"`
	// ClientID and ClientSecret of the connected app.
	ClientID     string `yaml:"clientId"`
	ClientSecret string `yaml:"clientSecret"`
	// APIVersion of the REST API. Default 59.0.
	APIVersion string `yaml:"apiVersion"`
	// Concurrency (default 4) and Rate (sends per second, default 0: no limit).
	channels.Limits `yaml:",inline"`
}

// DefaultSettings returns the feedChat section's defaults.
func DefaultSettings() *Settings {
	return &Settings{LoginURL: DefaultLoginURL, APIVersion: DefaultAPIVersion, Limits: channels.Limits{Concurrency: 4}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	if u, err := url.Parse(s.LoginURL); err != nil || u.Scheme == "" || u.Host == "" {
		errs = append(errs, fmt.Errorf("loginURL: %q is not an absolute URL", s.LoginURL))
	}
	if s.APIVersion == "" {
		errs = append(errs, errors.New("apiVersion: must not be empty"))
	}
	return errors.Join(append(errs, s.Limits.Validate())...)
}

// Descriptor registers the feed chat kind.
var Descriptor = channels.Descriptor{
	Kind:    Kind,
	Wire:    "feedChatConfiguration",
	Title:   "Feed chat",
	Secret:  "password",
	Section: "feedChat",
	Fields: []channels.Field{
		{Key: "username", Label: "User name", Type: "text", Placeholder: "jane@example.com"},
		{Key: "password", Label: "Password and security token", Type: "password"},
	},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(_ channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		var a Account
		if err := channels.DecodeStrict(config, &a); err != nil {
			return nil, err
		}
		switch {
		case strings.TrimSpace(a.Username) == "":
			return nil, channels.Invalid("username", "is required")
		case len(a.Username) > 255:
			return nil, channels.Invalid("username", "must be at most 255 characters")
		}
		return channels.Encode(a), nil
	},
	Recipient: func(config json.RawMessage) string {
		var a Account
		_ = json.Unmarshal(config, &a)
		return a.Username
	},
	NewSender: func(set channels.Settings, env channels.Env) (channels.Sender, func() error, error) {
		s := set.(*Settings)
		return New(Config{LoginURL: s.LoginURL, ClientID: s.ClientID, ClientSecret: s.ClientSecret,
			APIVersion: s.APIVersion, Timeout: env.SendTimeout, Clock: env.Clock, Conns: s.Concurrency}, nil), nil, nil
	},
}
