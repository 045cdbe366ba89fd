package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

func channelURI(uid, cid string) string { return wire.ChannelURI(uid, cid) }

// channelJSON is the record as the API shows it: never a secret. With
// recipient verification on, a channel to a mailbox or phone says whether its
// recipient confirmed (extension): "verification":"verified" or "unverified".
func (s *Server) channelJSON(c store.Channel, verification string) wire.ChannelDoc {
	key := c.Kind + "Configuration"
	if d, ok := s.notify.Kinds().Lookup(channels.Kind(c.Kind)); ok {
		key = d.Wire
	}
	return wire.ChannelDoc{ChannelConfiguration: &wire.Channel{
		Configuration: map[string]json.RawMessage{key: c.Config},
		Meta: &wire.Meta{
			Title: c.Title, Author: profileURI(c.Owner), Category: "channelConfiguration",
			Created: timestamp(c.Created), Updated: timestamp(c.Updated), URI: channelURI(c.Owner, c.ID),
		},
		Verification: verification,
	}}
}

// channelInput is the domain's input of a channel configuration: its kind
// picked by its wire key.
func (s *Server) channelInput(in *wire.Channel) (notify.ChannelInput, error) {
	const root = "channelConfiguration"
	if in == nil {
		return notify.ChannelInput{}, badField(root, "is required")
	}
	var out notify.ChannelInput
	if in.Meta != nil {
		out.Title = in.Meta.Title
	}
	kinds := s.notify.Kinds()
	wires := strings.Join(kinds.Wires(), ", ")
	key, config, ok := in.Kind()
	if !ok {
		return out, badField(root+".configuration", "must hold exactly one of "+wires)
	}
	d, ok := kinds.ByWire(key)
	if !ok {
		return out, badField(root+".configuration", "must hold exactly one of "+wires+"; "+key+" is none of them")
	}
	out.Kind, out.Config = d.Kind, config
	return out, nil
}

// respondChannel answers the channel with its verification.
func (s *Server) respondChannel(w http.ResponseWriter, r *http.Request, status int, ch store.Channel) error {
	v, err := s.notify.Verification(r.Context(), ch)
	if err != nil {
		return err
	}
	respond(w, r, status, s.channelJSON(ch, v))
	return nil
}

func (s *Server) createChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	if _, err := s.userOf(r, uid); err != nil {
		return err
	}
	var req wire.ChannelDoc
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	in, err := s.channelInput(req.ChannelConfiguration)
	if err != nil {
		return err
	}
	ch, err := s.notify.CreateChannel(r.Context(), uid, in)
	if err != nil {
		return fromDomain("channels", err)
	}
	w.Header().Set("Location", channelURI(uid, ch.ID))
	return s.respondChannel(w, r, http.StatusCreated, ch)
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	ch, err := s.notify.Channel(r.Context(), r.PathValue("uid"), r.PathValue("cid"))
	if err != nil {
		return fromDomain("channels", err)
	}
	return s.respondChannel(w, r, http.StatusOK, ch)
}

func (s *Server) listChannels(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	if _, err := s.userOf(r, uid); err != nil {
		return err
	}
	chans, err := s.notify.Channels(r.Context(), uid)
	if err != nil {
		return err
	}
	states, err := s.notify.Verifications(r.Context(), uid, chans)
	if err != nil {
		return err
	}
	items := make([]wire.ChannelDoc, 0, len(chans))
	for _, ch := range chans {
		items = append(items, s.channelJSON(ch, states[ch.ID]))
	}
	respond(w, r, http.StatusOK, wire.ChannelList{ChannelConfigurations: wire.Items[wire.ChannelDoc]{Items: items}})
	return nil
}

func (s *Server) putChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	if _, err := s.notify.Channel(r.Context(), r.PathValue("uid"), r.PathValue("cid")); err != nil {
		return fromDomain("channels", err) // a stranger's channel is a 404 before its body is read
	}
	var req wire.ChannelDoc
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	in, err := s.channelInput(req.ChannelConfiguration)
	if err != nil {
		return err
	}
	ch, err := s.notify.UpdateChannel(r.Context(), r.PathValue("uid"), r.PathValue("cid"), in)
	if err != nil {
		return fromDomain("channels", err)
	}
	return s.respondChannel(w, r, http.StatusOK, ch)
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.notify.DeleteChannel(r.Context(), r.PathValue("uid"), r.PathValue("cid")); err != nil {
		return fromDomain("channels", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// testChannel (extension) sends a test message to the channel at once through
// its kind's sender and answers what the provider said:
// {"channelTest":{"accepted":true,"providerId":"…"}} or
// {"channelTest":{"accepted":false,"error":"…","permanent":true}}.
// A refusal of the provider is a 200; a channel tested moments ago is a 429.
func (s *Server) testChannel(w http.ResponseWriter, r *http.Request, c *caller) error {
	by := c.Login
	if by == "" {
		by = profileURI(c.UserID)
	}
	res, err := s.notify.TestChannel(r.Context(), r.PathValue("uid"), r.PathValue("cid"), by)
	if errors.Is(err, notify.ErrNoTester) {
		return newError(http.StatusServiceUnavailable, classUnavailable, "channels", "Channel tests are not available: no sender is running")
	}
	if err != nil {
		return fromDomain("channels", err)
	}
	respond(w, r, http.StatusOK, map[string]any{"channelTest": testJSON(res)})
	return nil
}

// testJSON is what the provider answered a test or a confirmation.
func testJSON(res notify.TestResult) map[string]any {
	if res.Error != "" {
		return map[string]any{"accepted": false, "error": res.Error, "permanent": res.Permanent}
	}
	return map[string]any{"accepted": true, "providerId": res.ProviderID}
}

// resendConfirmation (extension) sends the recipient of a channel that waits
// for it a new confirmation message and answers what the provider said, as a
// test does: {"channelConfirmation":{"accepted":true,"providerId":"…"}}. A
// channel that needs no confirmation, or has it, is a 409; one whose
// recipient got one moments ago, or whose owner spent their sends on demand,
// a 429.
func (s *Server) resendConfirmation(w http.ResponseWriter, r *http.Request, c *caller) error {
	res, err := s.notify.ResendConfirmation(r.Context(), r.PathValue("uid"), r.PathValue("cid"))
	if errors.Is(err, notify.ErrNoTester) {
		return newError(http.StatusServiceUnavailable, classUnavailable, "channels", "Confirmations are not available: no sender is running")
	}
	if err != nil {
		return fromDomain("channels", err)
	}
	respond(w, r, http.StatusOK, map[string]any{"channelConfirmation": testJSON(res)})
	return nil
}
