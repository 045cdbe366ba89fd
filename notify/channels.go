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
	"github.com/heraldhq/herald/wire"
)

// maxSecret bounds a channel secret.
const maxSecret = 1024

const channelRoot = "channelConfiguration"

// CreateChannel validates body, seals its secret and stores it as a channel of owner.
func (s *Service) CreateChannel(ctx context.Context, owner string, body *wire.Channel) (store.Channel, error) {
	now := s.now()
	ch := store.Channel{ID: store.NewHexID(), Owner: owner, Created: now, Updated: now}
	if err := s.parseChannel(body, &ch, nil); err != nil {
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

// UpdateChannel replaces channel id of owner with body; a body without the
// secret keeps the stored one when the kind stays the same.
func (s *Service) UpdateChannel(ctx context.Context, owner, id string, body *wire.Channel) (store.Channel, error) {
	old, err := s.Channel(ctx, owner, id)
	if err != nil {
		return store.Channel{}, err
	}
	ch := store.Channel{ID: old.ID, Owner: old.Owner, Created: old.Created, Updated: s.now()}
	if err := s.parseChannel(body, &ch, &old); err != nil {
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

// ShowChannel returns the channel's configuration as the API shows it, its
// kind's wire name and the configuration without the secret.
func (s *Service) ShowChannel(ch store.Channel) (wire string, config json.RawMessage) {
	if d, ok := s.kinds.Lookup(channels.Kind(ch.Kind)); ok {
		return d.Wire, ch.Config
	}
	return ch.Kind + "Configuration", ch.Config
}

// Recipient names where the channel sends to.
func (s *Service) Recipient(ch store.Channel) string {
	if d, ok := s.kinds.Lookup(channels.Kind(ch.Kind)); ok {
		return d.Recipient(ch.Config)
	}
	return ""
}

// parseChannel validates body into ch: the kind, the title, the kind's
// configuration and, sealed, its secret. old is the stored channel on an
// update, whose secret is kept when the body leaves it out.
func (s *Service) parseChannel(body *wire.Channel, ch *store.Channel, old *store.Channel) error {
	if body == nil {
		return invalid(channelRoot, "is required")
	}
	if body.Meta == nil || strings.TrimSpace(body.Meta.Title) == "" {
		return invalid(channelRoot+".meta.title", "is required")
	}
	if utf8.RuneCountInString(body.Meta.Title) > 255 {
		return invalid(channelRoot+".meta.title", "must be at most 255 characters")
	}
	ch.Title = body.Meta.Title
	wires := strings.Join(s.kinds.Wires(), ", ")
	if len(body.Configuration) != 1 {
		return invalid(channelRoot+".configuration", "must hold exactly one of "+wires)
	}
	var wire string
	var raw json.RawMessage
	for wire, raw = range body.Configuration {
	}
	d, ok := s.kinds.ByWire(wire)
	if !ok {
		return invalid(channelRoot+".configuration", "must hold exactly one of "+wires+"; "+wire+" is none of them")
	}
	path := channelRoot + ".configuration." + wire
	fields := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(raw))
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
