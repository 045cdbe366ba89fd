package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
)

// envelope is the message of one delivery on the stream: everything a sender
// on any machine needs, so that it reads nothing of the control process's
// store. Its files travel apart, in the object store, named by their content.
type envelope struct {
	envelopeHead
	// The message, under the names and in the shapes of store.Payload, so
	// that a payload without files travels as the store holds it (see
	// sealAsStored).
	Subject     string               `json:"subject"`
	Text        string               `json:"text"`
	HTML        string               `json:"html,omitempty"`
	HTMLObject  *Object              `json:"htmlObject,omitempty"` // the HTML, when too big to travel inline
	Attachments []envelopeAttachment `json:"attachments,omitempty"`
	Source      channels.Source      `json:"source,omitzero"`
	Links       channels.Links       `json:"links,omitzero"`
}

// envelopeHead is what an envelope says of the delivery, apart from its message.
type envelopeHead struct {
	ID string `json:"id"` // the delivery id
	// Owner is the id of the user whose subscription made the delivery, and
	// Subscription the subscription's id: senders share their slots fairly by
	// owner and drop what a subscription's owner called off.
	Owner        string          `json:"owner,omitempty"`
	Subscription string          `json:"subscription,omitempty"`
	Channel      envelopeChannel `json:"channel"`
	// Secret is the channel's secret sealed with the delivery key for this
	// delivery id, so that it opens only on a sender that shares the key and
	// only for this delivery.
	Secret []byte `json:"secret,omitempty"`
}

type envelopeChannel struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Config json.RawMessage `json:"config"`
}

type envelopeAttachment struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType,omitempty"`
	ContentID   string `json:"contentId,omitempty"`
	Object      Object `json:"object"`
}

// filePutter stores a file where senders fetch it; *Files is one.
type filePutter interface {
	Put(ctx context.Context, path string) (Object, error)
}

// fileFetcher makes local copies of stored files, and removes those unused
// for longer than age; *Files is one.
type fileFetcher interface {
	Fetch(ctx context.Context, o Object) (string, error)
	Prune(age time.Duration) error
}

// errUndeliverable marks what makes a delivery impossible to hand to any
// sender (its channel deleted, its file gone): the relay fails it at once.
var errUndeliverable = errors.New("cannot be delivered")

// errUnverified is the failure of a delivery to a recipient who has not
// confirmed (delivery.verifyRecipients): it is undeliverable, and says no more.
var errUnverified = &unverified{}

type unverified struct{}

func (*unverified) Error() string        { return "recipient not verified" }
func (*unverified) Is(target error) bool { return target == errUndeliverable }

// seal builds the envelope of a delivery as the store holds it: its secret
// opened with the key at rest and sealed again with the delivery key, its
// files put into the object store. maxBytes bounds the encoded envelope; an
// HTML part that does not fit goes to the object store too. Errors wrapping
// errUndeliverable fail the delivery; others leave it for a later sweep.
func seal(ctx context.Context, d store.Outgoing, atRest, delivery *secret.Box, files filePutter, maxBytes int) ([]byte, error) {
	switch {
	case d.ChannelGone:
		return nil, fmt.Errorf("%w: channel %s was deleted", errUndeliverable, d.ChannelID)
	case d.ChannelKind != d.Kind:
		return nil, fmt.Errorf("%w: channel %s changed kind from %s to %s", errUndeliverable, d.ChannelID, d.Kind, d.ChannelKind)
	case d.ChannelUnverified:
		return nil, errUnverified
	}
	plain, err := atRest.OpenFor(d.ChannelSecret, d.ChannelID)
	if err != nil {
		return nil, fmt.Errorf("%w: channel %s: %v", errUndeliverable, d.ChannelID, err)
	}
	head := envelopeHead{ID: d.ID, Owner: d.Owner, Subscription: d.SubscriptionID,
		Channel: envelopeChannel{ID: d.ChannelID, Kind: d.ChannelKind, Config: d.ChannelConfig}}
	if plain != "" {
		if delivery == nil {
			return nil, fmt.Errorf("%w: no delivery key to seal the secret of channel %s", errUndeliverable, d.ChannelID)
		}
		head.Secret = delivery.Seal([]byte(plain), []byte(d.ID))
	}
	if data, ok := sealAsStored(head, d.Payload, maxBytes); ok {
		return data, nil
	}
	p, err := d.Payload.Decode()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUndeliverable, err)
	}
	env := envelope{envelopeHead: head, Subject: p.Subject, Text: p.Text, HTML: p.HTML, Source: p.Source, Links: p.Links}
	for _, a := range p.Attachments {
		o, err := files.Put(ctx, a.Path)
		if err != nil {
			return nil, putError(a.Name, err)
		}
		env.Attachments = append(env.Attachments, envelopeAttachment{Name: a.Name, ContentType: a.ContentType,
			ContentID: a.ContentID, Object: o})
	}
	if p.HTMLFile != "" {
		// The HTML part many deliveries share (a slice's recipients'): put
		// once, by its content, and fetched by each sender.
		o, err := files.Put(ctx, p.HTMLFile)
		if err != nil {
			return nil, putError("the HTML part", err)
		}
		env.HTMLObject = &o
	}
	data, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUndeliverable, err)
	}
	if len(data) <= maxBytes || env.HTML == "" {
		return tooBig(data, maxBytes)
	}
	o, err := putText(ctx, files, env.HTML)
	if err != nil {
		return nil, putError("the HTML part", err)
	}
	env.HTML, env.HTMLObject = "", &o
	if data, err = json.Marshal(env); err != nil {
		return nil, fmt.Errorf("%w: %v", errUndeliverable, err)
	}
	return tooBig(data, maxBytes)
}

// sealAsStored encodes the envelope of a payload that has no files as head
// followed by the payload's JSON as the store holds it, which then need not be
// decoded and encoded again, and reports whether it could: not when the
// payload has files to put first (its keys "attachments" or "htmlFile", or a
// string value that is exactly one of them, erring on the safe side: a quote
// within a string is escaped), is not valid JSON, or makes the envelope larger
// than maxBytes, for which seal moves the HTML to the object store.
func sealAsStored(head envelopeHead, p store.RawPayload, maxBytes int) ([]byte, bool) {
	if len(p) < 2 || p[0] != '{' || p[1] != '"' || bytes.Contains(p, []byte(`"attachments"`)) ||
		bytes.Contains(p, []byte(`"htmlFile"`)) || !json.Valid(p) {
		return nil, false
	}
	h, err := json.Marshal(head)
	if err != nil {
		return nil, false
	}
	data := make([]byte, 0, len(h)+len(p))
	data = append(append(append(data, h[:len(h)-1]...), ','), p[1:]...)
	return data, len(data) <= maxBytes
}

// tooBig fails a message that is larger than maxBytes even without its HTML.
func tooBig(data []byte, maxBytes int) ([]byte, error) {
	if len(data) > maxBytes {
		return nil, fmt.Errorf("%w: the message is %d bytes without its files, over the %d a message may carry",
			errUndeliverable, len(data), maxBytes)
	}
	return data, nil
}

// putError makes a file that cannot be stored for good undeliverable.
func putError(name string, err error) error {
	if errors.Is(err, ErrFileTooLarge) || errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s: %v", errUndeliverable, name, err)
	}
	return fmt.Errorf("store %s: %w", name, err)
}

// putText stores text as a file of the object store.
func putText(ctx context.Context, files filePutter, text string) (Object, error) {
	f, err := os.CreateTemp("", "herald-part-*")
	if err != nil {
		return Object{}, err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(text)
	if err = errors.Join(err, f.Close()); err != nil {
		return Object{}, err
	}
	return files.Put(ctx, f.Name())
}

// open turns an envelope back into the message a sender sends: the secret
// opened with the delivery key, the files fetched into local copies. Its
// errors wrap errUndeliverable when no retry can cure them.
func (env *envelope) open(ctx context.Context, delivery *secret.Box, files fileFetcher) (channels.Message, error) {
	m := channels.Message{
		DeliveryID: env.ID,
		Channel:    channels.Channel{ID: env.Channel.ID, Kind: channels.Kind(env.Channel.Kind), Config: env.Channel.Config},
		Subject:    env.Subject,
		Text:       env.Text,
		HTML:       env.HTML,
		Source:     env.Source,
		Links:      env.Links,
	}
	if len(env.Secret) > 0 {
		s, err := delivery.OpenFor(env.Secret, env.ID)
		if err != nil {
			return m, fmt.Errorf("%w: channel %s: the delivery key does not open its secret: %v", errUndeliverable, env.Channel.ID, err)
		}
		m.Channel.Secret = s
	}
	if env.HTMLObject != nil {
		path, err := files.Fetch(ctx, *env.HTMLObject)
		if err != nil {
			return m, fetchError("the HTML part", err)
		}
		html, err := os.ReadFile(path)
		if err != nil {
			return m, fmt.Errorf("the HTML part: %w", err)
		}
		m.HTML = string(html)
	}
	for _, a := range env.Attachments {
		path, err := files.Fetch(ctx, a.Object)
		if err != nil {
			return m, fetchError(a.Name, err)
		}
		m.Attachments = append(m.Attachments, channels.Attachment{Name: a.Name, ContentType: a.ContentType, Path: path,
			ContentID: a.ContentID})
	}
	return m, nil
}

// fetchError makes a file that is gone for good undeliverable.
func fetchError(name string, err error) error {
	if errors.Is(err, ErrNoObject) || errors.Is(err, ErrCorruptObject) {
		return fmt.Errorf("%w: %s: %v", errUndeliverable, name, err)
	}
	return fmt.Errorf("fetch %s: %w", name, err)
}
