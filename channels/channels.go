package channels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Kind is a channel kind's stable name, such as "email": see Descriptor.
type Kind string

// Channel is a channel configuration as the worker hands it to a sender: its
// kind's configuration as Descriptor.Parse kept it, and its secret opened.
//
// Its String, Format and LogValue methods redact Secret, so a Channel may be
// printed or logged as a whole.
type Channel struct {
	ID     string // channel configuration id
	Kind   Kind
	Config json.RawMessage // the kind's configuration, without the secret
	Secret string          `json:"-"` // the kind's secret (password, token); never logged
}

const redacted = "[redacted]"

func redact(secret string) string {
	if secret == "" {
		return ""
	}
	return redacted
}

// String describes the channel with its secret redacted.
func (c Channel) String() string {
	return fmt.Sprintf("{ID:%s Kind:%s Config:%s Secret:%s}", c.ID, c.Kind, c.Config, redact(c.Secret))
}

// Format prints the channel as String does for every verb and flag, so that
// neither %v, %+v nor %#v can reveal the secret.
func (c Channel) Format(f fmt.State, _ rune) {
	fmt.Fprint(f, c.String())
}

// LogValue implements slog.LogValuer with the secret redacted.
func (c Channel) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", c.ID),
		slog.String("kind", string(c.Kind)),
		slog.String("config", string(c.Config)),
		slog.String("secret", redact(c.Secret)),
	)
}

// Decode decodes the channel's configuration into v (a pointer to the kind's
// configuration type). Its error is permanent: a configuration the API kept
// that no longer decodes will not decode on a retry either.
func (c Channel) Decode(v any) error {
	if err := json.Unmarshal(c.Config, v); err != nil {
		return Permanent(fmt.Errorf("channel %s: configuration: %w", c.ID, err))
	}
	return nil
}

// Attachment is a file on disk to attach to a message.
type Attachment struct {
	Name        string // file name shown to the recipient
	ContentType string // MIME type; empty lets the sender guess
	Path        string // where the file is
	// ContentID is set on a file the HTML body shows inline (an image it
	// references as cid:<ContentID>): it belongs to the HTML, and a sender
	// that does not send the HTML leaves it out.
	ContentID string
}

// Message is one delivery to one channel.
type Message struct {
	DeliveryID  string // stable per (subscription, instant, channel); idempotency key
	Channel     Channel
	Subject     string
	Text        string
	HTML        string // optional
	Attachments []Attachment
	// Source is the run the message comes from; zero for a message no run made.
	Source Source
	// Links lead from the message back to the service; zero when the service
	// has no public URL to build them on.
	Links Links
}

// Files returns the attachments that are files of their own, without the
// images of the HTML body.
func (m Message) Files() []Attachment {
	out := make([]Attachment, 0, len(m.Attachments))
	for _, a := range m.Attachments {
		if a.ContentID == "" {
			out = append(out, a)
		}
	}
	return out
}

// Links are the service's addresses a message can carry, each signed for
// this message so that following it needs no login.
type Links struct {
	// Unsubscribe stops this subscription from sending to this channel: a
	// POST to it (RFC 8058 one-click) pauses the channel; a GET shows a page
	// that asks first.
	Unsubscribe string `json:"unsubscribe,omitempty"`
	// Subscription is the subscription's page in the console; "" when the
	// service has no console.
	Subscription string `json:"subscription,omitempty"`
	// Files download the run's attachments one by one, in the order of
	// Message.Files, until they expire.
	Files []FileLink `json:"files,omitempty"`
}

// FileLink downloads one attachment without a login until Expires.
type FileLink struct {
	Name    string    `json:"name"`
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

// Source is what a receiver may want to know of the run behind a message.
type Source struct {
	Subscription      string              `json:"subscription,omitempty"` // URI
	SubscriptionTitle string              `json:"subscriptionTitle,omitempty"`
	Run               string              `json:"run,omitempty"` // id
	Instant           time.Time           `json:"instant,omitzero"`
	Manual            bool                `json:"manual,omitempty"`   // sent now by a person, not by the schedule
	Resolved          bool                `json:"resolved,omitempty"` // the condition stopped holding
	Values            map[string]*float64 `json:"values,omitempty"`   // metric URI → value the condition saw; nil: no value
	// Previous are the values the subscription read with f:previous: metric
	// URI → its value at the last evaluated fire; nil: none.
	Previous map[string]*float64 `json:"previous,omitempty"`
}

// LogValue implements slog.LogValuer: the delivery, its channel and subject, no body.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("delivery", m.DeliveryID),
		slog.Any("channel", m.Channel),
		slog.String("subject", m.Subject),
		slog.Int("attachments", len(m.Attachments)),
	)
}

// Sender delivers messages to one kind of channel.
//
// Send returns the provider's id for the accepted message. A plain error means
// the delivery may pass later and can be retried; an error for which
// IsPermanent reports true must not be retried; one for which IsUnavailable
// reports true sent nothing and says the destination takes nothing for now.
//
// A sender whose channels name providers of their own (a webhook's receiver, a
// Slack workspace) also implements Destination(c Channel) string, naming the
// provider a channel's messages go to, so that the worker holds, limits and
// shares sends per destination. A kind without it has one destination: the
// provider of the process's configuration (its SMTP relay, its SMS account).
type Sender interface {
	Kind() Kind
	Send(ctx context.Context, m Message) (providerID string, err error)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as permanent: retrying the delivery cannot succeed.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err or any error it wraps was marked by Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// Unavailable marks err as the provider's (or the process's own) inability to
// take any message for now, with nothing sent: a relay that refuses the
// connection, an outbox folder that cannot be written, a full disk. The worker
// holds the destination's deliveries without charging them an attempt and
// probes until it takes messages again. Unavailable(nil) is nil.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return &unavailableError{err: err}
}

// IsUnavailable reports whether err or any error it wraps was marked by Unavailable.
func IsUnavailable(err error) bool {
	var u *unavailableError
	return errors.As(err, &u)
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as transient with the delay the provider asked for (an
// HTTP Retry-After, Slack's ratelimited): the next attempt waits at least d.
// RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: d}
}

// RetryDelay returns the delay RetryAfter put on err or an error it wraps.
func RetryDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}

// UnreachableText is all that a failure to reach a receiver says to the
// owner of the channel: see Unreachable.
const UnreachableText = "could not reach the receiver"

type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return UnreachableText }
func (e *unreachableError) Unwrap() error { return e.err }

// Unreachable marks err as a failure to reach the receiver at all, before
// it answered anything: a name that does not resolve, an address the kind
// refuses, a connection refused, reset or timed out, a TLS handshake or an
// answer that is not the protocol's. Its text is UnreachableText and
// nothing more, so that what the owner of a channel learns of an address
// they named does not tell a closed port from an open one (or one that
// speaks another protocol); err, which a sender logs, stays reachable
// through errors.Unwrap, IsPermanent and RetryDelay. Unreachable(nil) is nil.
func Unreachable(err error) error {
	if err == nil {
		return nil
	}
	return &unreachableError{err: err}
}

// IsUnreachable reports whether err or any error it wraps was marked by Unreachable.
func IsUnreachable(err error) bool {
	var u *unreachableError
	return errors.As(err, &u)
}
