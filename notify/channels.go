package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// ChannelInput is a channel configuration as its owner gives it, in the
// domain's values: its title, its kind, and the kind's configuration, which
// the kind's descriptor decodes (the secret among its fields, when the kind
// has one; left out on an update, the stored one is kept).
type ChannelInput struct {
	Title  string
	Kind   channels.Kind
	Config json.RawMessage
}

// maxSecret bounds a channel secret.
const maxSecret = 1024

const channelRoot = "channelConfiguration"

// CreateChannel validates in, seals its secret and stores it as a channel of owner.
func (s *Service) CreateChannel(ctx context.Context, owner string, in ChannelInput) (store.Channel, error) {
	now := s.now()
	ch := store.Channel{ID: store.NewHexID(), Owner: owner, Created: now, Updated: now}
	if err := s.parseChannel(in, &ch, nil); err != nil {
		return store.Channel{}, err
	}
	var qe *store.QuotaError
	if err := s.st.CreateChannel(ctx, ch, s.quota()); errors.As(err, &qe) {
		return store.Channel{}, quotaReached(qe)
	} else if err != nil {
		return store.Channel{}, err
	}
	s.askRecipient(ctx, ch)
	return ch, nil
}

// Channel returns channel id of owner.
func (s *Service) Channel(ctx context.Context, owner, id string) (store.Channel, error) {
	ch, err := s.st.ChannelByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ch.Owner != owner) {
		return store.Channel{}, notFound("Channel configuration %s not found", id)
	}
	return ch, err
}

// Channels lists the channels of owner, oldest first.
func (s *Service) Channels(ctx context.Context, owner string) ([]store.Channel, error) {
	return s.st.Channels(ctx, owner)
}

// UpdateChannel replaces channel id of owner with in; an input without the
// secret keeps the stored one when the kind stays the same.
func (s *Service) UpdateChannel(ctx context.Context, owner, id string, in ChannelInput) (store.Channel, error) {
	old, err := s.Channel(ctx, owner, id)
	if err != nil {
		return store.Channel{}, err
	}
	ch := store.Channel{ID: old.ID, Owner: old.Owner, Created: old.Created, Updated: s.now()}
	if err := s.parseChannel(in, &ch, &old); err != nil {
		return store.Channel{}, err
	}
	if err := s.st.UpdateChannel(ctx, ch); err != nil {
		return store.Channel{}, err
	}
	s.askRecipient(ctx, ch)
	return ch, nil
}

// DeleteChannel deletes channel id of owner unless subscriptions use it.
func (s *Service) DeleteChannel(ctx context.Context, owner, id string) error {
	ch, err := s.Channel(ctx, owner, id)
	if err != nil {
		return err
	}
	var inUse *store.InUseError
	switch err := s.st.DeleteChannel(ctx, ch.ID); {
	case errors.As(err, &inUse):
		return conflict("Channel configuration %s is used by subscriptions %s; remove it from them first",
			ch.ID, strings.Join(inUse.By, ", "))
	case errors.Is(err, store.ErrNotFound):
		return notFound("Channel configuration %s not found", id)
	default:
		return err
	}
}

// Kinds are the channel kinds the service takes.
func (s *Service) Kinds() *channels.Registry { return s.kinds }

// Recipient names where the channel sends to.
func (s *Service) Recipient(ch store.Channel) string {
	if d, ok := s.kinds.Lookup(channels.Kind(ch.Kind)); ok {
		return d.Recipient(ch.Config)
	}
	return ""
}

// parseChannel validates in into ch: the title, the kind's configuration
// and, sealed, its secret. old is the stored channel on an update, whose
// secret is kept when the input leaves it out. Errors name the fields'
// paths on the wire, the configuration's under the kind's wire key.
func (s *Service) parseChannel(in ChannelInput, ch *store.Channel, old *store.Channel) error {
	if strings.TrimSpace(in.Title) == "" {
		return invalid(channelRoot+".meta.title", "is required")
	}
	if utf8.RuneCountInString(in.Title) > 255 {
		return invalid(channelRoot+".meta.title", "must be at most 255 characters")
	}
	ch.Title = in.Title
	d, ok := s.kinds.Lookup(in.Kind)
	if !ok {
		return invalid(channelRoot+".configuration", "must hold exactly one of "+strings.Join(s.kinds.Wires(), ", "))
	}
	path := channelRoot + ".configuration." + d.Wire
	fields := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(in.Config))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return invalid(path, "must be a JSON object")
	}
	secret, err := takeSecret(d, fields, path)
	if err != nil {
		return err
	}
	rest, _ := json.Marshal(fields)
	cfg, err := d.Parse(s.settings[d.Kind], rest)
	if err != nil {
		return fieldInvalid(path, err)
	}
	ch.Kind = string(d.Kind)
	switch {
	case d.Secret == "":
		ch.Secret = nil
	case secret != nil:
		ch.Secret = s.box.Seal([]byte(*secret), []byte(ch.ID))
	case old != nil && old.Kind == ch.Kind && old.Secret != nil:
		ch.Secret = old.Secret
	default:
		return invalid(path+"."+d.Secret, "is required")
	}
	if d.ParseSecret != nil {
		if cfg, err = s.parseSecret(d, cfg, secret, ch, path); err != nil {
			return err
		}
	}
	ch.Config = cfg
	ch.Recipient = s.mustConfirm(ch.Kind, cfg)
	return nil
}

// parseSecret runs the kind's ParseSecret over the secret given or, when
// the body left it out, the one ch keeps.
func (s *Service) parseSecret(d *channels.Descriptor, cfg json.RawMessage, secret *string, ch *store.Channel, path string) (json.RawMessage, error) {
	var plain string
	if secret != nil {
		plain = *secret
	} else {
		var err error
		if plain, err = s.box.OpenFor(ch.Secret, ch.ID); err != nil {
			return nil, fmt.Errorf("channel %s: %w", ch.ID, err)
		}
	}
	cfg, err := d.ParseSecret(s.settings[d.Kind], cfg, plain)
	if err != nil {
		return nil, fieldInvalid(path, err)
	}
	return cfg, nil
}

// fieldInvalid is a kind's error about a field of its configuration at path.
func fieldInvalid(path string, err error) error {
	var fe *channels.FieldError
	if errors.As(err, &fe) {
		return invalid(strings.TrimSuffix(path+"."+fe.Field, "."), fe.Message)
	}
	return invalid(path, err.Error())
}

// takeSecret removes the kind's secret field from fields and checks it.
func takeSecret(d *channels.Descriptor, fields map[string]json.RawMessage, path string) (*string, error) {
	if d.Secret == "" {
		return nil, nil
	}
	raw, ok := fields[d.Secret]
	if !ok {
		return nil, nil
	}
	delete(fields, d.Secret)
	p := path + "." + d.Secret
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, invalid(p, "must be a string")
	}
	switch {
	case v == "":
		return nil, invalid(p, "must not be empty")
	case len(v) > maxSecret:
		return nil, invalid(p, "must be at most 1024 bytes")
	}
	return &v, nil
}
