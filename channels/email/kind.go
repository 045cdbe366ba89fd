package email

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

// Kind is the e-mail channel kind.
const Kind channels.Kind = "email"

// Address is an e-mail channel's configuration: its one recipient. The wire
// shape is {"emailConfiguration":{"to":"jane@example.com"}}.
type Address struct {
	To string `json:"to"`
}

// Settings is the smtp section of the configuration.
type Settings struct {
	// Host of the SMTP relay. Default empty: messages are written as .eml
	// files into <data>/outbox instead.
	Host string `yaml:"host"`
	// Port of the relay. Default 587.
	Port int `yaml:"port"`
	// TLSPolicy is mandatory, opportunistic or none. Default mandatory.
	TLSPolicy string `yaml:"tlsPolicy"`
	// Username and Password authenticate to the relay. Default none.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// From is the sender address. Default herald@localhost.
	From string `yaml:"from"`
	// MaxIdleTime is how long a pooled connection may stay quiet and still be used;
	// older ones are replaced before a send. Default 20s.
	MaxIdleTime time.Duration `yaml:"maxIdleTime"`
	// DKIM signs every message, sent or written to the outbox, with the key
	// in dkim.keyFile; its keys (domain, selector, keyFile, headers) are
	// documented on DKIMSettings. Default off.
	DKIM DKIMSettings `yaml:"dkim"`
	// MaxAttachmentBytes bounds a mail's files in total: beyond it they
	// travel as download links (publicURL needed; without it the delivery
	// fails), and the mail says so in one line. Default 10 MiB.
	MaxAttachmentBytes int64 `yaml:"maxAttachmentBytes"`
	// Concurrency (default 8) and Rate (sends per second, default 0: no limit).
	// The sender keeps as many connections open between sends as it runs
	// sends at once.
	channels.Limits `yaml:",inline"`
}

// DefaultSettings returns the smtp section's defaults.
func DefaultSettings() *Settings {
	return &Settings{Port: 587, TLSPolicy: "mandatory", From: "herald@localhost", MaxIdleTime: DefaultMaxIdleTime,
		MaxAttachmentBytes: DefaultMaxAttachmentBytes,
		DKIM:               DKIMSettings{Headers: defaultDKIMHeaders()}, Limits: channels.Limits{Concurrency: 8}}
}

// Validate names the wrong key.
func (s *Settings) Validate() error {
	var errs []error
	if _, err := tlsPolicy(s.TLSPolicy); err != nil || s.TLSPolicy == "" {
		errs = append(errs, fmt.Errorf("tlsPolicy: %q is not one of mandatory, opportunistic, none", s.TLSPolicy))
	}
	if s.Port < 1 || s.Port > 65535 {
		errs = append(errs, fmt.Errorf("port: must be a port number, got %d", s.Port))
	}
	if !strings.Contains(s.From, "@") {
		errs = append(errs, fmt.Errorf("from: %q is not an e-mail address", s.From))
	}
	if s.MaxIdleTime < time.Second {
		errs = append(errs, fmt.Errorf("maxIdleTime: must be at least 1s, got %s", s.MaxIdleTime))
	}
	if s.MaxAttachmentBytes < 1 {
		errs = append(errs, fmt.Errorf("maxAttachmentBytes: must be at least 1, got %d", s.MaxAttachmentBytes))
	}
	return errors.Join(append(errs, s.DKIM.check(s.From), s.Limits.Validate())...)
}

// Descriptor registers the e-mail kind.
var Descriptor = channels.Descriptor{
	Kind:     Kind,
	Wire:     "emailConfiguration",
	Title:    "E-mail",
	Section:  "smtp",
	Fields:   []channels.Field{{Key: "to", Label: "Recipient address", Type: "email", Placeholder: "jane@example.com"}},
	Settings: func() channels.Settings { return DefaultSettings() },
	Parse: func(_ channels.Settings, config json.RawMessage) (json.RawMessage, error) {
		var a Address
		if err := channels.DecodeStrict(config, &a); err != nil {
			return nil, err
		}
		if err := CheckAddress(a.To); err != nil {
			return nil, channels.Invalid("to", "%s", err)
		}
		return channels.Encode(a), nil
	},
	Recipient: func(config json.RawMessage) string {
		var a Address
		_ = json.Unmarshal(config, &a)
		return a.To
	},
	Login: func(login string) json.RawMessage { return channels.Encode(Address{To: login}) },
	Readdress: func(_ channels.Settings, _ json.RawMessage, address string) (json.RawMessage, error) {
		if err := CheckAddress(address); err != nil {
			return nil, channels.Invalid("to", "%s", err)
		}
		return channels.Encode(Address{To: address}), nil
	},
	Mailbox: func(config json.RawMessage) (string, string) {
		var a Address
		_ = json.Unmarshal(config, &a)
		to := strings.ToLower(a.To)
		return to, to[strings.LastIndexByte(to, '@')+1:]
	},
	NewSender: func(set channels.Settings, env channels.Env) (channels.Sender, func() error, error) {
		s := set.(*Settings)
		signer, err := newDKIM(s.DKIM, s.From)
		if err != nil {
			return nil, nil, err
		}
		if s.Host == "" {
			o := newOutbox(filepath.Join(env.Data, "outbox"), s.From, signer, env.Logger)
			o.compose.maxFiles = s.MaxAttachmentBytes
			return o, nil, nil
		}
		snd, err := New(Config{Host: s.Host, Port: s.Port, TLSPolicy: s.TLSPolicy, Username: s.Username,
			Password: s.Password, From: s.From, Timeout: env.SendTimeout, Clock: env.Clock, dkim: signer,
			MaxIdle: s.Concurrency, MaxIdleTime: s.MaxIdleTime, MaxAttachmentBytes: s.MaxAttachmentBytes}, env.Logger)
		if err != nil {
			return nil, nil, err
		}
		return snd, snd.Close, nil
	},
}

// CheckAddress accepts exactly one bare e-mail address.
func CheckAddress(v string) error {
	if v == "" {
		return errors.New("is required")
	}
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v || len(v) > 254 {
		return errors.New("must be one e-mail address such as jane@example.com")
	}
	return nil
}
