package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/egress"
)

// Kind is the webhook channel kind.
const Kind channels.Kind = "webhook"

// MaxURL is the longest endpoint URL, in bytes.
const MaxURL = egress.MaxURL

// DefaultMaxInlineBytes is the default of Settings.MaxInlineBytes: 4 MiB.
const DefaultMaxInlineBytes = 4 << 20

// Endpoint is a webhook channel's configuration: the URL it posts to. The
// signing secret is the channel's secret, on the wire as "secret":
// {"webhookConfiguration":{"url":"https://hooks.example.com/herald","secret":"…"}}.
type Endpoint struct {
	URL string `json:"url"`
	// Template, when set, is the body: JSON with ${...} expressions of the
	// subscription's template language over TemplateVars (see
	// jexl.Template.RenderJSON). Empty: the body is a Payload.
	Template string `json:"template,omitempty"`
}

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver = egress.Resolver

// Settings is the webhook section of the configuration.
type Settings struct {
	// AllowNetworks lists networks in CIDR form that endpoints may be in
	// although they are loopback, private, link-local, otherwise not
	// globally reachable, or addresses of this host; and that plain http
	// may be sent to. Default none: https to public addresses only.
	AllowNetworks []string `yaml:"allowNetworks"`
	// MaxInlineBytes bounds the attachments of one message put inline in the
	// body, in total; one that does not fit is listed without its content.
	// Default 4 MiB; 0 lists every attachment without content.
	MaxInlineBytes int64 `yaml:"maxInlineBytes"`
	// MaxAttachmentBytes bounds a message's files in total: beyond it none
	// is inline, each is listed with its download link (publicURL needed;
	// without it the delivery fails), and the text says so in one line.
	// Default 10 MiB.
	MaxAttachmentBytes int64 `yaml:"maxAttachmentBytes"`
	// CAFile is a PEM file of certificate authorities trusted beside the
	// system's, for endpoints whose certificates an intranet CA issued.
	// Default empty: the system's only.
	CAFile string `yaml:"caFile"`
	// Resolver looks up endpoint host names when connecting; nil means
	// net.DefaultResolver. Not configurable: tests set it.
	Resolver Resolver `yaml:"-"`
	// InterfaceAddrs lists this host's addresses, which are refused; nil
	// means net.InterfaceAddrs. Not configurable: tests set it.
	InterfaceAddrs func() ([]net.Addr, error) `yaml:"-"`
	// Dial connects to an address the guard admitted; nil means a
	// net.Dialer's. Not configurable: tests set it, to see what would be dialled.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `yaml:"-"`
	// Concurrency (default 32), Rate (sends per second, default 0: no limit),
	// PerDestination (sends to one origin at once, default 4) and PerOwner (sends
	// of one owner at once, default 16). Receivers are slow or hang at their
	// owner's cost: a slot is a goroutine and a connection, so there are many.
	channels.Limits `yaml:",inline"`
}

// DefaultSettings returns the webhook section's defaults.
func DefaultSettings() *Settings {
	return &Settings{AllowNetworks: []string{}, MaxInlineBytes: DefaultMaxInlineBytes, MaxAttachmentBytes: 10 * channels.MiB,
		Limits: channels.Limits{Concurrency: 32, PerDestination: 4, PerOwner: 16}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	if err := egress.ValidateNetworks(s.AllowNetworks); err != nil {
		errs = append(errs, err)
	}
	if s.CAFile != "" {
		if _, err := loadCAs(s.CAFile); err != nil {
			errs = append(errs, fmt.Errorf("caFile: %w", err))
		}
	}
	if s.MaxInlineBytes < 0 {
		errs = append(errs, fmt.Errorf("maxInlineBytes: must be 0 (no attachment inline) or more, got %d", s.MaxInlineBytes))
	}
	if s.MaxAttachmentBytes < 1 {
		errs = append(errs, fmt.Errorf("maxAttachmentBytes: must be at least 1, got %d", s.MaxAttachmentBytes))
	}
	return errors.Join(append(errs, s.Limits.Validate())...)
}

// Egress is the guard's configuration the section holds: the webhook's
// allowNetworks, which other kinds that post to a URL a channel names read
// too, and the hooks tests set.
func (s *Settings) Egress() egress.Config {
	return egress.Config{AllowNetworks: s.AllowNetworks, Key: "webhook.allowNetworks", Name: "webhook",
		NoCredentials: "requests are authenticated by their signature, and the URL is shown and logged where a secret is not",
		Resolver:      s.Resolver, InterfaceAddrs: s.InterfaceAddrs, Dial: s.Dial}
}

// settingsOf returns the kind's settings from s, or the defaults when s is not
// the kind's settings.
func settingsOf(s channels.Settings) *Settings {
	if set, ok := s.(*Settings); ok && set != nil {
		return set
	}
	return DefaultSettings()
}

// Descriptor registers the webhook kind.
var Descriptor = channels.Descriptor{
	Kind:    Kind,
	Wire:    "webhookConfiguration",
	Title:   "Webhook",
	Secret:  "secret",
	Section: "webhook",
	Fields: []channels.Field{
		{Key: "url", Label: "Endpoint URL", Type: "url", Placeholder: "https://hooks.example.com/herald"},
		{Key: "secret", Label: "Signing secret", Type: "password"},
		{Key: "template", Label: "Body template (JSON with ${…}; empty for Herald's own JSON)", Type: "textarea",
			Placeholder: `{"text": ${subject}}`},
	},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(set channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		var e Endpoint
		if err := channels.DecodeStrict(config, &e); err != nil {
			return nil, err
		}
		e.URL = strings.TrimSpace(e.URL)
		if _, err := egress.New(settingsOf(set).Egress()).CheckURL(e.URL); err != nil {
			return nil, err
		}
		if strings.TrimSpace(e.Template) == "" {
			e.Template = ""
		} else if _, err := parseTemplate(e.Template); err != nil {
			return nil, err
		}
		return channels.Encode(e), nil
	},
	Recipient: func(config json.RawMessage) string {
		var e Endpoint
		_ = json.Unmarshal(config, &e)
		u, err := url.Parse(e.URL)
		if err != nil {
			return ""
		}
		return u.Host
	},
	NewSender: func(set channels.Settings, env channels.Env) (channels.Sender, func() error, error) {
		s, err := New(settingsOf(set), env)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	},
}
