package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// ConfirmPath is the path, under the public URL, of the link a recipient
// follows to accept a channel's messages. It needs no login: the signed token
// in the path is the permission.
const ConfirmPath = "/confirm/"

const (
	purposeConfirm = "confirm"
	// confirmTTL is how long a confirmation link works; a resent
	// confirmation carries a new one.
	confirmTTL = 7 * 24 * time.Hour
	// confirmEvery is how often a confirmation may go to one recipient.
	confirmEvery = 15 * time.Minute
)

// Verification states of a channel, as the API shows them.
const (
	Verified   = "verified"
	Unverified = "unverified"
)

// ConfirmSubject is the subject of confirmation messages.
const ConfirmSubject = "Confirm that you want messages from Herald"

// mustConfirm returns the address of a kept configuration of kind whose
// holder must accept its messages before they go: with recipient
// verification on, the mailbox or number of a kind that has one, unless it is
// an e-mail address in a trusted domain or a subdomain of one. "" when none
// must.
func (s *Service) mustConfirm(kind string, config json.RawMessage) string {
	if !s.verifying {
		return ""
	}
	d, ok := s.kinds.Lookup(channels.Kind(kind))
	if !ok || d.Mailbox == nil {
		return ""
	}
	address, domain := d.Mailbox(config)
	if domain != "" {
		for _, t := range s.trusted {
			if domain == t || strings.HasSuffix(domain, "."+t) {
				return ""
			}
		}
	}
	return address
}

// askRecipient sends the first confirmation to the recipient of a channel
// just saved, unless it confirmed already, or a confirmation went to it
// before (the owner may resend one). The confirmation spends one of the
// owner's sends on demand. Its failures are logged: the channel is saved,
// and waits for its recipient either way.
func (s *Service) askRecipient(ctx context.Context, ch store.Channel) {
	if ch.Recipient == "" {
		return
	}
	err := func() error {
		r, err := s.st.EnsureRecipient(ctx, ch.Owner, ch.Kind, ch.Recipient, store.NewHexID())
		if err != nil || !r.Verified.IsZero() {
			return err
		}
		now := s.now().Truncate(time.Second)
		if first, err := s.st.AskRecipient(ctx, r.ID, now, true); err != nil || !first {
			return err
		}
		res, err := s.confirm(ctx, ch, r, now, s.ownerBudget(ch.Owner))
		if err == nil && res.Error != "" {
			err = errors.New(res.Error)
		}
		if err != nil { // the owner may send it again
			return errors.Join(err, s.st.UnaskRecipient(context.WithoutCancel(ctx), r.ID, now, time.Time{}))
		}
		return nil
	}()
	if err != nil {
		s.log.Warn("recipient not asked to confirm", "channel", ch.ID, "kind", ch.Kind, "err", err)
	}
}

// ResendConfirmation sends the recipient of channel id of owner a new
// confirmation, at most once per recipient per 15 minutes, and says what the
// provider answered, as TestChannel does. It spends one of the owner's sends
// on demand. Its errors are NotFound, Conflict (the channel needs no
// confirmation, or has it), TooSoon, ErrNoTester and internal ones.
func (s *Service) ResendConfirmation(ctx context.Context, owner, id string) (TestResult, error) {
	ch, err := s.Channel(ctx, owner, id)
	if err != nil {
		return TestResult{}, err
	}
	if ch.Recipient == "" {
		return TestResult{}, conflict("Channel configuration %s sends without a confirmation", ch.ID)
	}
	if s.tester == nil {
		return TestResult{}, ErrNoTester
	}
	r, err := s.st.EnsureRecipient(ctx, ch.Owner, ch.Kind, ch.Recipient, store.NewHexID())
	if err != nil {
		return TestResult{}, err
	}
	if !r.Verified.IsZero() {
		return TestResult{}, conflict("The recipient of channel configuration %s has confirmed already", ch.ID)
	}
	now := s.now().Truncate(time.Second)
	if wait, ok := s.confirms.take(r.ID, now); !ok {
		return TestResult{}, tooSoon(wait, "A confirmation went to the recipient of channel configuration %s moments ago; "+
			"another may go in %s s", ch.ID)
	}
	if _, err := s.st.AskRecipient(ctx, r.ID, now, false); err != nil {
		return TestResult{}, err
	}
	res, err := s.confirm(ctx, ch, r, now, s.ownerBudget(ch.Owner))
	if err != nil || res.Error != "" {
		if uerr := s.st.UnaskRecipient(context.WithoutCancel(ctx), r.ID, now, r.Asked); uerr != nil {
			return res, errors.Join(err, uerr)
		}
	}
	return res, err
}

// confirm spends a send from budget and sends r the confirmation of channel
// ch, signed at now, and says what the provider answered, as TestChannel
// does: a refusal is in the result, not an error.
func (s *Service) confirm(ctx context.Context, ch store.Channel, r store.Recipient, now time.Time, budget claim) (TestResult, error) {
	if s.tester == nil {
		return TestResult{}, ErrNoTester
	}
	if _, err := s.spend(ctx, now, budget); err != nil {
		return TestResult{}, err
	}
	m, err := s.confirmation(ctx, ch, r, now)
	if err != nil {
		s.log.Warn("confirmation not sent", "channel", ch.ID, "kind", ch.Kind, "recipient", r.ID, "err", err)
		return TestResult{Error: err.Error(), Permanent: true}, nil
	}
	providerID, err := s.tester.Test(ctx, m)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return TestResult{}, fmt.Errorf("confirm recipient %s: %w", r.ID, err)
		}
		res := TestResult{Error: err.Error(), Permanent: channels.IsPermanent(err)}
		if unreachable(err) {
			res.Error = channels.UnreachableText
		}
		s.log.Info("confirmation refused", "channel", ch.ID, "kind", ch.Kind, "recipient", r.ID, "delivery", m.DeliveryID,
			"permanent", res.Permanent, "err", err)
		return res, nil
	}
	s.log.Info("confirmation sent", "channel", ch.ID, "kind", ch.Kind, "recipient", r.ID, "delivery", m.DeliveryID,
		"provider_id", providerID)
	return TestResult{ProviderID: providerID}, nil
}

// confirmation is the message that asks r to accept the messages of ch, with
// the channel's secret opened as the worker opens it.
func (s *Service) confirmation(ctx context.Context, ch store.Channel, r store.Recipient, now time.Time) (channels.Message, error) {
	if s.publicURL == "" || len(s.linkKey) == 0 {
		return channels.Message{}, errors.New("no public URL to build the confirmation link on")
	}
	secret, err := s.box.OpenFor(ch.Secret, ch.ID)
	if err != nil {
		return channels.Message{}, fmt.Errorf("channel %s: %w", ch.ID, err)
	}
	who := "Someone"
	if u, err := s.st.UserByID(ctx, ch.Owner); err == nil {
		who = u.Login
	}
	exp := strconv.FormatInt(now.Add(confirmTTL).Unix(), 36)
	link := s.publicURL + ConfirmPath + s.sign(purposeConfirm, r.ID, exp)
	text := fmt.Sprintf("%s asked Herald to send reports and alerts to %s. To accept them, open this link and press "+
		"the button:\n\n%s\n\nIf you did not expect this, ignore this message: nothing is sent to this address unless "+
		"it is accepted. The link works until %s.", who, r.Address, link, now.Add(confirmTTL).UTC().Format("2 January 2006"))
	return channels.Message{
		DeliveryID: "confirm-" + store.NewID(20),
		Channel:    channels.Channel{ID: ch.ID, Kind: channels.Kind(ch.Kind), Config: ch.Config, Secret: secret},
		Subject:    ConfirmSubject,
		Text:       text,
	}, nil
}

// Confirmation is what a confirmation link stands for: an owner's wish to
// send to an address, and whether its holder accepted.
type Confirmation struct {
	Address  string    // the recipient's address
	By       string    // the owner's login
	Verified time.Time // zero: not accepted yet
	id       string
}

// Confirmation reads what the confirmation token stands for, without
// changing anything.
func (s *Service) Confirmation(ctx context.Context, token string) (Confirmation, error) {
	f, err := s.verify(purposeConfirm, token, 2)
	if err != nil {
		return Confirmation{}, err
	}
	exp, err := strconv.ParseInt(f[1], 36, 64)
	if err != nil {
		return Confirmation{}, errBadLink
	}
	r, err := s.st.RecipientByID(ctx, f[0])
	if errors.Is(err, store.ErrNotFound) {
		return Confirmation{}, gone("The messages this link is about were withdrawn")
	}
	if err != nil {
		return Confirmation{}, err
	}
	c := Confirmation{Address: r.Address, By: "its sender", Verified: r.Verified, id: r.ID}
	if u, err := s.st.UserByID(ctx, r.Owner); err == nil {
		c.By = u.Login
	}
	if until := time.Unix(exp, 0); c.Verified.IsZero() && !s.now().Before(until) {
		return c, gone("This link expired on %s; its sender can send a new one", until.UTC().Format(time.RFC1123))
	}
	return c, nil
}

// Confirm accepts, for the recipient the token names, the messages of its
// sender's channels to it. A second call changes nothing.
func (s *Service) Confirm(ctx context.Context, token string) (Confirmation, error) {
	c, err := s.Confirmation(ctx, token)
	if err != nil || !c.Verified.IsZero() {
		return c, err
	}
	at := s.now().UTC().Truncate(time.Second)
	if _, err := s.st.VerifyRecipient(ctx, c.id, at); err != nil {
		return c, err
	}
	s.log.Info("recipient confirmed", "recipient", c.id)
	c.Verified = at
	return c, nil
}

// Verification says whether channel ch waits for its recipient: Verified,
// Unverified, or "" when recipient verification is off or the kind has no
// mailbox.
func (s *Service) Verification(ctx context.Context, ch store.Channel) (string, error) {
	states, err := s.Verifications(ctx, ch.Owner, []store.Channel{ch})
	return states[ch.ID], err
}

// Verifications is Verification of channels of owner, by channel id.
func (s *Service) Verifications(ctx context.Context, owner string, chans []store.Channel) (map[string]string, error) {
	out := make(map[string]string, len(chans))
	if !s.verifying {
		return out, nil
	}
	var verified map[string]bool
	for _, ch := range chans {
		if d, ok := s.kinds.Lookup(channels.Kind(ch.Kind)); !ok || d.Mailbox == nil {
			continue
		}
		if ch.Recipient == "" {
			out[ch.ID] = Verified
			continue
		}
		if verified == nil {
			rs, err := s.st.Recipients(ctx, owner)
			if err != nil {
				return nil, err
			}
			verified = make(map[string]bool, len(rs))
			for _, r := range rs {
				verified[r.Kind+"\x00"+r.Address] = !r.Verified.IsZero()
			}
		}
		out[ch.ID] = Unverified
		if verified[ch.Kind+"\x00"+ch.Recipient] {
			out[ch.ID] = Verified
		}
	}
	return out, nil
}

// RecheckRecipients sets, for every channel of a kind with a mailbox, the
// recipient that must confirm under the configuration of the day: turning
// delivery.verifyRecipients on holds the channels saved before until their
// recipients confirm (their owners send the confirmations), and trusting a
// domain releases its addresses. It returns how many channels changed.
func (s *Service) RecheckRecipients(ctx context.Context) (int, error) {
	var kinds []string
	for _, d := range s.kinds.All() {
		if d.Mailbox != nil {
			kinds = append(kinds, string(d.Kind))
		}
	}
	list, err := s.st.ChannelRecipients(ctx, kinds...)
	if err != nil {
		return 0, err
	}
	set := map[string]string{}
	for _, c := range list {
		if want := s.mustConfirm(c.Kind, c.Config); want != c.Recipient {
			set[c.ID] = want
		}
	}
	if len(set) == 0 {
		return 0, nil
	}
	return len(set), s.st.SetChannelRecipients(ctx, set)
}
