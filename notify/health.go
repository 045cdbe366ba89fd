package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// rateBatch is how many finished runs one roll-up counts at most; rateSettle
// is how long a woken roll-up waits for more runs to finish, so that a burst
// is counted in a few transactions rather than one per batch of the ledger.
const (
	rateBatch  = 2000
	rateSettle = 100 * time.Millisecond
)

// WakeHealth asks the health roll-up to look at finished runs now.
func (s *Service) WakeHealth() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// RunHealth rolls finished runs up into their subscriptions' health until ctx
// ends: at every Config.HealthInterval, and when WakeHealth asks.
func (s *Service) RunHealth(ctx context.Context) error {
	t := s.clock.NewTicker(s.cfg.HealthInterval)
	defer t.Stop()
	for {
		for {
			n, err := s.RateRuns(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Error("roll up subscription health", "err", err)
			}
			if err != nil || n < rateBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		case <-s.wake:
			select {
			case <-ctx.Done():
				return nil
			case <-s.clock.After(rateSettle):
			}
		}
	}
}

// StageAuthorize is the stage of a run whose fire the access decision
// refused (Decide): its error is "authorize: " and the reason.
const StageAuthorize = "authorize"

// refused reports whether a run failed because its fire was refused.
func refused(run store.Run) bool {
	return run.State == store.RunFailed && strings.HasPrefix(run.Error, StageAuthorize+": ")
}

// RateRuns counts the runs that became final since the last roll-up toward
// their subscriptions' health, and returns how many it counted. A run that
// failed, to evaluate or to deliver (every delivery failed), adds a failure;
// a run that delivered anything, or found its condition false, clears them; a
// skipped run changes nothing. The run that reaches
// Config.FailuresBeforeNotice failures marks the subscription unhealthy and
// carries a notice to each of the owner's channels that did not fail in it.
// A refused fire does at once: firing again will not cure it, and the owner
// is told once, not at every fire.
func (s *Service) RateRuns(ctx context.Context) (int, error) {
	runs, err := s.st.UnratedRuns(ctx, rateBatch)
	if err != nil || len(runs) == 0 {
		return 0, err
	}
	ids := make([]string, 0, len(runs))
	for _, run := range runs {
		ids = append(ids, run.SubscriptionID)
	}
	states, err := s.st.States(ctx, ids)
	if err != nil {
		return 0, err
	}
	ratings := make([]store.Rating, 0, len(runs))
	for _, run := range runs {
		st := states[run.SubscriptionID]
		before := st
		tell := false
		pause := false
		switch run.State {
		case store.RunFailed:
			st.Failures++
			if (st.Failures >= s.cfg.FailuresBeforeNotice || refused(run) || renderFailed(run)) && !st.Unhealthy {
				st.Unhealthy, tell = true, true
			}
			if n := s.cfg.PauseAfterFailures; n > 0 && st.Failures%n == 0 { // again after a resume, n more
				pause, tell = true, true
			}
		case store.RunDelivered, store.RunPartiallyFailed, store.RunNotTriggered:
			st.Failures, st.Unhealthy = 0, false
		}
		states[run.SubscriptionID] = st
		r := store.Rating{Run: run, Failures: st.Failures, Unhealthy: st.Unhealthy,
			Changed: st.Failures != before.Failures || st.Unhealthy != before.Unhealthy}
		if pause {
			r.Pause = fmt.Sprintf("failed %d times in a row", st.Failures)
		}
		if tell {
			if r.Notice, err = s.notice(ctx, run, st.Failures, pause); err != nil {
				return 0, err
			}
		}
		ratings = append(ratings, r)
	}
	if err := s.st.RateRuns(ctx, ratings, s.now()); err != nil {
		return 0, err
	}
	for _, r := range ratings {
		if r.Pause != "" {
			s.log.Warn("subscription paused: "+r.Pause, "subscription", r.Run.SubscriptionID, "run", r.Run.ID)
			s.changed(r.Run.SubscriptionID)
		}
	}
	for _, r := range ratings {
		if len(r.Notice) > 0 {
			if s.handedOver != nil {
				s.handedOver()
			}
			break
		}
	}
	return len(runs), nil
}

// notice builds the deliveries telling the owner that a subscription keeps
// failing, or that it paused itself: one to each of the owner's channels, of
// every kind, except those the failing run could not deliver to; and, when
// that leaves none, one to the owner's login address.
func (s *Service) notice(ctx context.Context, run store.Run, failures int, paused bool) ([]store.Delivery, error) {
	sub, err := s.st.SubscriptionByID(ctx, run.SubscriptionID)
	if err != nil {
		return nil, err
	}
	dels, err := s.st.RunDeliveries(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	var failing []string
	var why []string
	others := 0
	for _, d := range dels {
		switch {
		case d.State != store.DeliveryFailed:
		case d.Address != "": // a recipient's: their address failed, not the channel
			others++
		default:
			failing = append(failing, d.ChannelID)
			why = append(why, fmt.Sprintf("- %s channel %s: %s", d.Kind, d.ChannelID, d.LastError))
		}
	}
	if others > 0 {
		why = append(why, fmt.Sprintf("- %d deliveries to its recipients", others))
	}
	chans, err := s.st.Channels(ctx, sub.Owner)
	if err != nil {
		return nil, err
	}
	reason := run.Error
	if len(why) > 0 {
		reason += "\n" + strings.Join(why, "\n")
	}
	subject := fmt.Sprintf("Herald: subscription %q is failing", sub.Title)
	text := fmt.Sprintf("The subscription %q has failed %d times in a row and is marked unhealthy.\n\nLast failure (%s): %s\n",
		sub.Title, failures, run.ScheduledAt.Format(time.RFC3339), reason)
	if refused(run) {
		subject = fmt.Sprintf("Herald: subscription %q cannot run", sub.Title)
		text = fmt.Sprintf("The subscription %q did not run at %s: %s. It runs as its owner, and does not until "+
			"that changes; it is marked unhealthy, and this notice is not sent again while it stays so.\n",
			sub.Title, run.ScheduledAt.Format(time.RFC3339), strings.TrimPrefix(run.Error, StageAuthorize+": "))
	}
	p := store.Payload{
		Subject: subject,
		Text:    text,
		Source: channels.Source{Subscription: SubscriptionURI(sub), SubscriptionTitle: sub.Title, Run: run.ID,
			Instant: run.ScheduledAt},
	}
	if renderFailed(run) {
		p.Subject = fmt.Sprintf("Herald: subscription %q could not render its message", sub.Title)
		p.Text = fmt.Sprintf("The subscription %q did not send at %s: %s. Nothing was sent; it is marked unhealthy, "+
			"and this notice is not sent again while it stays so.\n", sub.Title, run.ScheduledAt.Format(time.RFC3339), run.Error)
	}
	if paused {
		p.Subject = fmt.Sprintf("Herald: subscription %q is paused", sub.Title)
		p.Text = fmt.Sprintf("The subscription %q has failed %d times in a row and has paused itself: it fires no more "+
			"until you resume it.\n\nLast failure (%s): %s\n", sub.Title, failures, run.ScheduledAt.Format(time.RFC3339), reason)
	}
	var out []store.Delivery
	for _, ch := range chans {
		if slices.Contains(failing, ch.ID) {
			continue
		}
		out = append(out, store.Delivery{ID: run.ID + "-notice-" + ch.ID, ChannelID: ch.ID, Kind: ch.Kind, Payload: p})
	}
	if len(out) == 0 {
		ch, err := s.loginChannel(ctx, sub.Owner)
		if err != nil {
			s.log.Warn("subscription unhealthy, and its owner cannot be told", "subscription", sub.ID, "run", run.ID, "err", err)
			return nil, nil
		}
		out = append(out, store.Delivery{ID: run.ID + "-notice-" + ch.ID, ChannelID: ch.ID, Kind: ch.Kind, Payload: p})
	}
	return out, nil
}

// loginChannel returns the owner's channel to their login address, through
// which the service's notices go when no other channel of the owner's works:
// made the first time it is needed, in the owner's list of channels where
// they see it, of the first kind that can send to a login address. Its address
// needs no confirmation: the owner signs in with it.
func (s *Service) loginChannel(ctx context.Context, owner string) (store.Channel, error) {
	id := "login" + owner
	if ch, err := s.st.ChannelByID(ctx, id); err == nil || !errors.Is(err, store.ErrNotFound) {
		return ch, err
	}
	user, err := s.st.UserByID(ctx, owner)
	if err != nil {
		return store.Channel{}, err
	}
	for _, d := range s.kinds.All() {
		if d.Login == nil {
			continue
		}
		now := s.now()
		cfg := d.Login(user.Login)
		if d.Mailbox != nil {
			address, _ := d.Mailbox(cfg)
			r, err := s.st.EnsureRecipient(ctx, owner, string(d.Kind), address, store.NewID(16))
			if err != nil {
				return store.Channel{}, err
			}
			if _, err := s.st.VerifyRecipient(ctx, r.ID, now); err != nil {
				return store.Channel{}, err
			}
		}
		ch := store.Channel{ID: id, Owner: owner, Kind: string(d.Kind), Title: "Notices to " + user.Login, Config: cfg,
			Created: now, Updated: now}
		if err := s.st.CreateChannel(ctx, ch, store.Quota{}); err != nil {
			if existing, err2 := s.st.ChannelByID(ctx, id); err2 == nil { // made meanwhile
				return existing, nil
			}
			return store.Channel{}, err
		}
		s.log.Info("made the channel of the owner's login address for notices", "owner", owner, "channel", id)
		return ch, nil
	}
	return store.Channel{}, errors.New("no channel kind sends to a login address")
}

// SubscriptionURI is the API's URI of a subscription, which the messages
// about it carry.
func SubscriptionURI(sub store.Subscription) string {
	return wire.SubscriptionURI(sub.ProjectID, sub.Owner, sub.ID)
}

// RunDetail is what a run records of itself (the run's detail JSON).
type RunDetail struct {
	Trigger    string              `json:"trigger,omitempty"` // TriggerSchedule (when empty), TriggerManual or TriggerCatchUp
	By         string              `json:"by,omitempty"`      // who sent it now
	Resolved   bool                `json:"resolved,omitempty"`
	Values     map[string]*float64 `json:"values,omitempty"`
	Condition  *bool               `json:"condition,omitempty"`
	Subject    string              `json:"subject,omitempty"`
	Text       string              `json:"text,omitempty"`
	Files      []store.Attachment  `json:"attachments,omitempty"`
	Stage      string              `json:"stage,omitempty"`
	Reason     string              `json:"reason,omitempty"`
	TimingsMS  map[string]int64    `json:"timingsMs,omitempty"`
	Recipients []string            `json:"channels,omitempty"`
	// Paused are the channels the run did not send to because they are paused.
	Paused []string `json:"pausedChannels,omitempty"`
	// Events happened to the run after it was handed over, such as an
	// unsubscribe from its message.
	Events []RunEvent `json:"events,omitempty"`
	// Skipped counts the recipients the run did not send to (burst rows of a
	// bad, unconfirmed or surplus address, members who may not have it).
	Skipped int `json:"skipped,omitempty"`
	// Audience is what a run of a subscription with recipients or a burst
	// did with them.
	Audience *Audience `json:"audience,omitempty"`
}

// RunEvent is something that happened to a run after it was handed over.
type RunEvent struct {
	Event   string `json:"event"`             // "unsubscribed", or "paused" (the subscription paused itself)
	Channel string `json:"channel,omitempty"` // the one unsubscribed from
	By      string `json:"by"`
	Reason  string `json:"reason,omitempty"`
	At      string `json:"at"` // RFC 3339
}

// Detail decodes a run's detail; one that does not parse is empty.
func Detail(run store.Run) RunDetail {
	var d RunDetail
	_ = json.Unmarshal(run.Detail, &d)
	return d
}
