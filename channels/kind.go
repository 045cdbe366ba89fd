package channels

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/clock"
)

// Descriptor is everything Herald knows of one channel kind. Every layer reads
// kinds from a Registry of descriptors: the API decodes and shows a channel's
// configuration through it, the domain layer seals its secret, the worker builds
// its sender and tunes its sends, and app reads its configuration section.
// Nothing else names a kind.
type Descriptor struct {
	// Kind is the stable name stored with each channel and used in delivery
	// subjects and metric labels, such as "email".
	Kind Kind
	// Wire is the key of the kind's configuration on the API, such as
	// "emailConfiguration".
	Wire string
	// Title names the kind for people, such as "E-mail".
	Title string
	// Secret is the wire field of the kind's one secret (a password or a token),
	// or "" when the kind has none. The secret is write-only on the API, sealed
	// at rest, handed to the sender in Channel.Secret and never logged.
	Secret string
	// Section is the key of the kind's section in the configuration file, such
	// as "smtp".
	Section string
	// Settings returns a new copy of the kind's configuration section holding
	// its defaults.
	Settings func() Settings
	// Parse validates a channel configuration as the API carries it, the secret
	// field taken out, under the kind's settings. It returns the configuration
	// to keep, which is also what the API shows; its errors are *FieldError with
	// paths inside the wire object.
	Parse func(s Settings, config json.RawMessage) (json.RawMessage, error)
	// ParseSecret, for a kind whose secret is the address it sends to (a
	// URL that carries its own signature, as a Teams workflow's does),
	// validates the secret under the kind's settings and returns the
	// configuration to keep: config, which Parse returned, with what may be
	// shown of the address (its host). It runs on every save, with the
	// secret given or, when the save leaves it out, the stored one; its
	// errors are *FieldError on the secret's field. nil for a kind whose
	// secret is a password or a token.
	ParseSecret func(s Settings, config json.RawMessage, secret string) (json.RawMessage, error)
	// Recipient names where a kept configuration sends to: an address, a
	// number, a user name, a host.
	Recipient func(config json.RawMessage) string
	// Mailbox, for a kind that sends to a person's mailbox or phone, returns
	// the address of a kept configuration as its holder confirms it
	// (delivery.verifyRecipients), in one form for the same address (an
	// e-mail address in lower case, a number in E.164), and for e-mail its
	// domain, which delivery.trustedDomains may trust. nil for a kind whose
	// channels post with credentials of their own (webhook, Slack, feed chat).
	Mailbox func(config json.RawMessage) (address, domain string)
	// Readdress, for a kind that can send to an address given apart from a
	// channel (a member's e-mail address or phone number, an address a
	// report's row gives), returns the configuration to send with: config,
	// a kept configuration of the kind (nil when the kind needs no channel of
	// the owner's), with address in place of its own, validated as Parse
	// validates it (a *FieldError otherwise). nil for a kind whose address is
	// its secret or its account.
	Readdress func(s Settings, config json.RawMessage, address string) (json.RawMessage, error)
	// Login, for a kind that can send to a user's login address (e-mail),
	// returns the configuration of a channel to that address: the service's
	// notices to an owner go there when no channel of the owner's works. nil
	// for the other kinds.
	Login func(login string) json.RawMessage
	// NewSender builds the kind's sender over its settings. The closer, which
	// may be nil, releases what the sender holds.
	NewSender func(s Settings, env Env) (Sender, func() error, error)
	// Fields are the string fields of the wire configuration, in the order a
	// form asks for them; the one named Secret is write-only.
	Fields []Field
}

// Field is one field of a kind's wire configuration as a form asks for it.
type Field struct {
	Key   string // the wire key, such as "to"
	Label string // for people, such as "Recipient address"
	// Type is the HTML input type: "email", "tel", "url", "password" or
	// "text"; or "textarea", for text of several lines.
	Type        string
	Placeholder string
}

// Settings is a kind's configuration section: a pointer to a struct with yaml
// tags that embeds Limits inline.
type Settings interface {
	// Validate names the wrong key, relative to the section.
	Validate() error
	// Limits are the section's limits of sends.
	SendLimits() Limits
}

// Linked is a Settings that reads another section of the configuration, as
// a kind that posts through the webhook's guard reads webhook.allowNetworks.
// The process calls Link, with every section by its key, before it hands
// the section to the kind.
type Linked interface {
	Settings
	Link(section func(key string) Settings)
}

// Limits bound the sends of one kind in one process. Kind sections embed it
// with the yaml tag ",inline", so its keys sit in the kind's section.
type Limits struct {
	// Concurrency is how many sends of the kind run at once.
	Concurrency int `yaml:"concurrency"`
	// Rate limits sends per second (a token bucket); 0 means no limit.
	Rate float64 `yaml:"rate"`
	// PerDestination bounds the sends to one destination (a webhook's origin, a
	// Slack workspace) at once, so that receivers that hang hold no more slots
	// than that; 0 means Concurrency.
	PerDestination int `yaml:"perDestination"`
	// PerOwner bounds the sends of one owner's deliveries at once, so that one
	// owner's receivers cannot take every slot of the kind; 0 means Concurrency.
	PerOwner int `yaml:"perOwner"`
}

// SendLimits returns l, so that a section embedding Limits satisfies Settings.
func (l Limits) SendLimits() Limits { return l }

// Validate checks the limits.
func (l Limits) Validate() error {
	switch {
	case l.Concurrency < 1:
		return fmt.Errorf("concurrency: must be at least 1, got %d", l.Concurrency)
	case l.Rate < 0:
		return fmt.Errorf("rate: must be 0 (no limit) or more, got %v", l.Rate)
	case l.PerDestination < 0:
		return fmt.Errorf("perDestination: must be 0 (concurrency) or more, got %d", l.PerDestination)
	case l.PerOwner < 0:
		return fmt.Errorf("perOwner: must be 0 (concurrency) or more, got %d", l.PerOwner)
	}
	return nil
}

// Env is what a sender may need of the process it runs in.
type Env struct {
	// Logger receives the sender's log.
	Logger *slog.Logger
	// Data is the process's data folder.
	Data string
	// SendTimeout bounds one send.
	SendTimeout time.Duration
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
}

// Defaults is env with what it leaves out filled: a send timeout of
// timeout, the real clock, and a logger that discards.
func (env Env) Defaults(timeout time.Duration) Env {
	if env.SendTimeout <= 0 {
		env.SendTimeout = timeout
	}
	env.Clock = clock.Or(env.Clock)
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	return env
}

// FieldError is a channel configuration that does not validate, with the
// path of the wrong field inside the kind's wire object ("to", "url").
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Invalid returns a *FieldError.
func Invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// DecodeStrict decodes a channel configuration into v, refusing fields v does
// not have and trailing data; errors are *FieldError.
func DecodeStrict(config json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return Invalid(te.Field, "must be a %s", te.Type)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return Invalid(name, "is not a field of this kind")
		}
		return Invalid("", "must be a JSON object: %v", err)
	}
	if dec.More() {
		return Invalid("", "must be one JSON object")
	}
	return nil
}

// Encode marshals a kept configuration; a value that cannot be marshalled is
// a programming error.
func Encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("channels: encode configuration: %v", err))
	}
	return b
}

// Registry is the set of channel kinds a process knows, in registration order.
type Registry struct {
	all    []*Descriptor
	byKind map[Kind]*Descriptor
	byWire map[string]*Descriptor
}

// NewRegistry checks the descriptors and returns their registry.
func NewRegistry(ds ...Descriptor) (*Registry, error) {
	r := &Registry{byKind: map[Kind]*Descriptor{}, byWire: map[string]*Descriptor{}}
	sections := map[string]bool{}
	for i := range ds {
		d := &ds[i]
		switch {
		case d.Kind == "" || d.Wire == "" || d.Section == "" || d.Title == "":
			return nil, fmt.Errorf("channels: kind %d lacks a name, wire name, title or section", i)
		case d.Settings == nil || d.Parse == nil || d.Recipient == nil || d.NewSender == nil:
			return nil, fmt.Errorf("channels: kind %s lacks a function", d.Kind)
		case r.byKind[d.Kind] != nil || r.byWire[d.Wire] != nil || sections[d.Section]:
			return nil, fmt.Errorf("channels: kind %s registered twice (or its wire name or section)", d.Kind)
		}
		r.all = append(r.all, d)
		r.byKind[d.Kind], r.byWire[d.Wire], sections[d.Section] = d, d, true
	}
	return r, nil
}

// MustRegistry is NewRegistry that panics on an error: for the fixed list of
// kinds a program is built with.
func MustRegistry(ds ...Descriptor) *Registry {
	r, err := NewRegistry(ds...)
	if err != nil {
		panic(err)
	}
	return r
}

// All returns the kinds in registration order.
func (r *Registry) All() []*Descriptor { return r.all }

// Lookup returns the kind named k.
func (r *Registry) Lookup(k Kind) (*Descriptor, bool) {
	d, ok := r.byKind[k]
	return d, ok
}

// ByWire returns the kind whose API key is wire.
func (r *Registry) ByWire(wire string) (*Descriptor, bool) {
	d, ok := r.byWire[wire]
	return d, ok
}

// Wires lists the API keys of every kind, in registration order.
func (r *Registry) Wires() []string {
	out := make([]string, len(r.all))
	for i, d := range r.all {
		out[i] = d.Wire
	}
	return out
}
