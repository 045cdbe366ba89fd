package channels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Kind is a stable channel kind string.
type Kind string

// The channel kinds Herald delivers to.
const (
	KindEmail    Kind = "email"
	KindSMS      Kind = "sms"
	KindFeedChat Kind = "feedchat"
)

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindEmail, KindSMS, KindFeedChat:
		return true
	}
	return false
}

// Channel is a decrypted channel configuration as the worker hands it over.
//
// Its String, Format and LogValue methods redact Password, so a Channel may be
// printed or logged as a whole.
type Channel struct {
	ID       string // channel configuration id
	Kind     Kind
	To       string // e-mail address (email) or E.164 number (sms)
	From     string // E.164 number (sms)
	Username string // sms: Twilio account SID; feedchat: user name
	Password string `json:"-"` // sms: auth token; feedchat: password + security token. Never logged.
}

const redacted = "[redacted]"

func redact(secret string) string {
	if secret == "" {
		return ""
	}
	return redacted
}

// String describes the channel with its password redacted.
func (c Channel) String() string {
	return fmt.Sprintf("{ID:%s Kind:%s To:%s From:%s Username:%s Password:%s}",
		c.ID, c.Kind, c.To, c.From, c.Username, redact(c.Password))
}

// Format prints the channel as String does for every verb and flag, so that
// neither %v, %+v nor %#v can reveal the password.
func (c Channel) Format(f fmt.State, _ rune) {
	fmt.Fprint(f, c.String())
}

// LogValue implements slog.LogValuer with the password redacted.
func (c Channel) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", c.ID),
		slog.String("kind", string(c.Kind)),
		slog.String("to", c.To),
		slog.String("from", c.From),
		slog.String("username", c.Username),
		slog.String("password", redact(c.Password)),
	)
}

// Attachment is a file on disk to attach to a message.
type Attachment struct {
	Name        string // file name shown to the recipient
	ContentType string // MIME type; empty lets the sender guess
	Path        string // where the file is
}

// Message is one delivery to one channel.
type Message struct {
	DeliveryID  string // stable per (subscription, instant, channel); idempotency key
	Channel     Channel
	Subject     string
	Text        string
	HTML        string // optional
	Attachments []Attachment
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
// IsPermanent reports true must not be retried.
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
