package sms

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/heraldhq/herald/channels"
)

// Kind is the SMS channel kind.
const Kind channels.Kind = "sms"

// Numbers is an SMS channel's configuration: the Twilio account SID as
// username, the sending number and the recipient, both in E.164 form. The
// auth token is the channel's secret, on the wire as "password":
// {"smsConfiguration":{"username":"AC…","password":"…","from":"+1…","to":"+420…"}}.
type Numbers struct {
	Username string `json:"username"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// Settings is the sms section of the configuration.
type Settings struct {
	// BaseURL of the Twilio-compatible API. Default https://api.twilio.com.
	BaseURL string `yaml:"baseURL"`
	// MaxSegments is the longest message in SMS segments; longer text is cut
	// with an ellipsis. Default 3.
	MaxSegments int `yaml:"maxSegments"`
	// Concurrency (default 4) and Rate (sends per second, default 0: no limit).
	channels.Limits `yaml:",inline"`
}

// DefaultSettings returns the sms section's defaults.
func DefaultSettings() *Settings {
	return &Settings{BaseURL: DefaultBaseURL, MaxSegments: DefaultMaxSegments, Limits: channels.Limits{Concurrency: 4}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	if u, err := url.Parse(s.BaseURL); err != nil || u.Scheme == "" || u.Host == "" {
		errs = append(errs, fmt.Errorf("baseURL: %q is not an absolute URL", s.BaseURL))
	}
	if s.MaxSegments < 1 {
		errs = append(errs, errors.New("maxSegments: must be at least 1"))
	}
	return errors.Join(append(errs, s.Limits.Validate())...)
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// Descriptor registers the SMS kind.
var Descriptor = channels.Descriptor{
	Kind:    Kind,
	Wire:    "smsConfiguration",
	Title:   "SMS",
	Secret:  "password",
	Section: "sms",
	Fields: []channels.Field{
		{Key: "username", Label: "Account SID", Type: "text", Placeholder: "AC…"},
		{Key: "password", Label: "Auth token", Type: "password"},
		{Key: "from", Label: "From number", Type: "tel", Placeholder: "+15005550006"},
		{Key: "to", Label: "To number", Type: "tel", Placeholder: "+420601234567"},
	},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(_ channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		var n Numbers
		if err := channels.DecodeStrict(config, &n); err != nil {
			return nil, err
		}
		switch {
		case strings.TrimSpace(n.Username) == "":
			return nil, channels.Invalid("username", "is required")
		case len(n.Username) > 255:
			return nil, channels.Invalid("username", "must be at most 255 characters")
		case !e164.MatchString(n.From):
			return nil, channels.Invalid("from", "must be a phone number in E.164 form, such as +420601234567")
		case !e164.MatchString(n.To):
			return nil, channels.Invalid("to", "must be a phone number in E.164 form, such as +420601234567")
		}
		return channels.Encode(n), nil
	},
	Recipient: func(config json.RawMessage) string {
		var n Numbers
		_ = json.Unmarshal(config, &n)
		return n.To
	},
	Readdress: func(_ channels.Settings, config json.RawMessage, address string) (json.RawMessage, error) {
		var n Numbers
		if err := json.Unmarshal(config, &n); err != nil || n.Username == "" {
			return nil, channels.Invalid("", "an SMS goes through an SMS channel's account")
		}
		if !e164.MatchString(address) {
			return nil, channels.Invalid("to", "must be a phone number in E.164 form, such as +420601234567")
		}
		n.To = address
		return channels.Encode(n), nil
	},
	Mailbox: func(config json.RawMessage) (string, string) {
		var n Numbers
		_ = json.Unmarshal(config, &n)
		return n.To, ""
	},
	NewSender: func(set channels.Settings, env channels.Env) (channels.Sender, func() error, error) {
		s := set.(*Settings)
		return New(Config{BaseURL: s.BaseURL, MaxSegments: s.MaxSegments, Timeout: env.SendTimeout,
			Conns: s.Concurrency}), nil, nil
	},
}
