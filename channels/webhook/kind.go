package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/channels"
)

// Kind is the webhook channel kind.
const Kind channels.Kind = "webhook"

// MaxURL is the longest endpoint URL, in bytes.
const MaxURL = 2048

// DefaultMaxInlineBytes is the default of Settings.MaxInlineBytes: 4 MiB.
const DefaultMaxInlineBytes = 4 << 20

// Endpoint is a webhook channel's configuration: the URL it posts to. The
// signing secret is the channel's secret, on the wire as "secret":
// {"webhookConfiguration":{"url":"https://hooks.example.com/herald","secret":"…"}}.
type Endpoint struct {
	URL string `json:"url"`
}

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

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
	return &Settings{AllowNetworks: []string{}, MaxInlineBytes: DefaultMaxInlineBytes,
		Limits: channels.Limits{Concurrency: 32, PerDestination: 4, PerOwner: 16}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	for i, n := range s.AllowNetworks {
		if _, err := netip.ParsePrefix(strings.TrimSpace(n)); err != nil {
			errs = append(errs, fmt.Errorf("allowNetworks[%d]: %q is not a network in CIDR form, such as 10.0.0.0/8", i, n))
		}
	}
	if s.CAFile != "" {
		if _, err := loadCAs(s.CAFile); err != nil {
			errs = append(errs, fmt.Errorf("caFile: %w", err))
		}
	}
	if s.MaxInlineBytes < 0 {
		errs = append(errs, fmt.Errorf("maxInlineBytes: must be 0 (no attachment inline) or more, got %d", s.MaxInlineBytes))
	}
	return errors.Join(append(errs, s.Limits.Validate())...)
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
	},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(set channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		var e Endpoint
		if err := channels.DecodeStrict(config, &e); err != nil {
			return nil, err
		}
		e.URL = strings.TrimSpace(e.URL)
		if _, err := newGuard(settingsOf(set)).checkURL(e.URL); err != nil {
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

// checkURL validates an endpoint URL under the guard's networks; errors are
// *channels.FieldError on "url". Host names are not resolved: the sender
// checks their addresses when it connects.
func (g *guard) checkURL(raw string) (*url.URL, error) {
	const example = "such as https://hooks.example.com/herald"
	if raw == "" {
		return nil, channels.Invalid("url", "is required")
	}
	if len(raw) > MaxURL {
		return nil, channels.Invalid("url", "must be at most %d characters", MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, channels.Invalid("url", "must be an absolute https URL, %s", example)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, channels.Invalid("url", "must be an https URL, %s; %q is not supported", example, u.Scheme+":")
	}
	if u.User != nil {
		return nil, channels.Invalid("url", "must not hold credentials (user:password@): requests are authenticated by their signature, "+
			"and the URL is shown and logged where a secret is not")
	}
	if u.Hostname() == "" {
		return nil, channels.Invalid("url", "must name a host, %s", example)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, channels.Invalid("url", "port %s is not a port number", p)
		}
	}
	addr, literal := parseAddr(u.Hostname())
	if literal {
		if why := g.refusal(addr); why != "" {
			return nil, channels.Invalid("url", "%s is %s, refused unless webhook.allowNetworks admits it", addr, why)
		}
	} else if why := oddName(u.Hostname()); why != "" {
		return nil, channels.Invalid("url", "%s %s", u.Hostname(), why)
	}
	if u.Scheme == "http" && (len(g.allow) == 0 || literal && !g.allowed(addr)) {
		return nil, channels.Invalid("url", "must be https; plain http only to networks in webhook.allowNetworks")
	}
	return u, nil
}

// oddName says why a host that is not a literal address is no name to
// resolve, or returns "": a name whose last label is a number (127.1,
// 2130706433, 0x7f.1) is an address in a form some resolvers read and
// others do not, and localhost names this host (RFC 6761).
func oddName(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	last := host[strings.LastIndexByte(host, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok && hex != "" && strings.Trim(hex, "0123456789abcdef") == "" ||
		last != "" && strings.Trim(last, "0123456789") == "" {
		return "is not a host name; write an IPv4 address as four decimal numbers"
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "names this host, refused"
	}
	return ""
}
