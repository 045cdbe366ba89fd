package api

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// Previewer evaluates a subscription now without sending anything, as its
// owner or as one of its recipients, and lists its recipients.
type Previewer interface {
	Preview(ctx context.Context, sub store.Subscription, recipient string) (engine.Preview, error)
	Recipients(ctx context.Context, sub store.Subscription) (engine.Recipients, error)
}

func subscriptionURI(pid, uid, sid string) string { return wire.SubscriptionURI(pid, uid, sid) }

// withHealth is the subscription record with what the engine knows of its health.
func (s *Server) withHealth(r *http.Request, sub store.Subscription) (wire.SubscriptionDoc, error) {
	h, err := s.notify.Health(r.Context(), sub.ID)
	if err != nil {
		return wire.SubscriptionDoc{}, err
	}
	return subscriptionRecord(sub, h), nil
}

// subscriptionRecord is the subscription as the API shows it, with its health.
func subscriptionRecord(sub store.Subscription, h notify.Health) wire.SubscriptionDoc {
	out := subscriptionJSON(sub)
	out.Health = &wire.Health{Healthy: h.Healthy, FailuresInARow: h.FailuresInARow}
	return wire.SubscriptionDoc{Subscription: out}
}

func (s *Server) respondSubscription(w http.ResponseWriter, r *http.Request, status int, sub store.Subscription) error {
	out, err := s.withHealth(r, sub)
	if err != nil {
		return err
	}
	respond(w, r, status, out)
	return nil
}

// message is the message template, with its HTML template when it has one.
func message(def store.SubscriptionDef) *wire.Template {
	m := wire.TextTemplate(def.Message)
	if def.MessageHTML != "" {
		m.HTML = &wire.Expression{Expression: new(def.MessageHTML)}
	}
	return m
}

func subscriptionJSON(sub store.Subscription) *wire.Subscription {
	triggers := make([]wire.Trigger, len(sub.Def.Triggers))
	for i, t := range sub.Def.Triggers {
		triggers[i] = wire.Trigger{TimerEvent: &wire.TimerEvent{CronExpression: new(t.Cron), Timezone: new(t.Timezone)}}
	}
	channels := make([]string, len(sub.Channels))
	for i, c := range sub.Channels {
		channels[i] = channelURI(sub.Owner, c)
	}
	attachments := make([]wire.Attachment, len(sub.Def.Attachments))
	for i, a := range sub.Def.Attachments {
		attachments[i] = wire.Attachment{Report: a.Report, Formats: a.Formats}
		if a.NewRowsBy != "" {
			attachments[i].NewRowsBy = new(a.NewRowsBy)
		}
	}
	out := &wire.Subscription{
		Triggers:    triggers,
		Condition:   &wire.Condition{Condition: &wire.Expression{Expression: new(sub.Def.Condition)}},
		Message:     message(sub.Def),
		Channels:    channels,
		Attachments: attachments,
		Enabled:     new(sub.Enabled),
		FireMode:    new(sub.Def.FireMode),
		OnEmpty:     new(cmp.Or(sub.Def.OnEmpty, store.OnEmptySend)),
		SendWhen:    new(cmp.Or(sub.Def.SendWhen, store.SendAlways)),
		Meta: &wire.Meta{
			Title: sub.Title, Author: profileURI(sub.Owner), Category: "subscription",
			Created: timestamp(sub.Created), Updated: timestamp(sub.Updated),
			URI: subscriptionURI(sub.ProjectID, sub.Owner, sub.ID),
		},
	}
	if sub.Def.Subject != "" {
		out.Subject = wire.TextTemplate(sub.Def.Subject)
	}
	if sub.Def.Resolved != "" {
		out.ResolvedMessage = wire.TextTemplate(sub.Def.Resolved)
	}
	if r := sub.Def.Recipients; r != nil {
		out.Recipients = recipientsJSON(sub, r)
	}
	if b := sub.Def.Burst; b != nil {
		out.Burst = &wire.Burst{Report: b.Report, Address: b.Address, By: b.By, Via: viaJSON(sub, b.Via)}
	}
	if len(sub.Paused) > 0 {
		paused := make([]wire.PausedChannel, 0, len(sub.Paused))
		for _, c := range sub.Channels {
			if p, ok := sub.Paused[c]; ok {
				paused = append(paused, wire.PausedChannel{Channel: channelURI(sub.Owner, c), By: p.By, At: timestamp(p.At)})
			}
		}
		out.PausedChannels = &paused
	}
	return out
}

// recipientsJSON is a subscription's recipients as the API carries them.
func recipientsJSON(sub store.Subscription, r *store.Recipients) *wire.Recipients {
	users, roles, via := make([]string, len(r.Users)), make([]string, 0, len(r.Roles)), make([]string, len(r.Via))
	for i, u := range r.Users {
		users[i] = profileURI(u)
	}
	for _, id := range r.Roles {
		if ro, ok := notify.RoleByIdentifier(id); ok {
			roles = append(roles, roleURI(sub.ProjectID, ro.ID))
		}
	}
	for i, v := range r.Via {
		via[i] = viaJSON(sub, v)
	}
	return &wire.Recipients{Users: users, Roles: roles, Via: via}
}

// viaJSON is a way to reach recipients: "email", or the URI of the owner's channel.
func viaJSON(sub store.Subscription, v store.Via) string {
	if v.Channel == "" {
		return v.Kind
	}
	return channelURI(sub.Owner, v.Channel)
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req wire.SubscriptionDoc
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	uid := r.PathValue("uid")
	if err := s.notify.CheckSubscriber(r.Context(), c.project.ID, uid); err != nil {
		return fromDomain("subscriptions", err)
	}
	in, err := s.subscriptionInput(c.project.ID, uid, req.Subscription)
	if err != nil {
		return err
	}
	sub, err := s.notify.CreateSubscription(r.Context(), c.project.ID, uid, in)
	if err != nil {
		return fromDomain("subscriptions", err)
	}
	w.Header().Set("Location", subscriptionURI(sub.ProjectID, uid, sub.ID))
	return s.respondSubscription(w, r, http.StatusCreated, sub)
}

// ownedSubscription loads subscription {sid} of user {uid} in the project, or answers 404.
func (s *Server) ownedSubscription(r *http.Request, c *caller) (store.Subscription, error) {
	sub, err := s.notify.Subscription(r.Context(), c.project.ID, r.PathValue("uid"), r.PathValue("sid"))
	return sub, fromDomain("subscriptions", err)
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	return s.respondSubscription(w, r, http.StatusOK, sub)
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request, c *caller) error {
	subs, err := s.notify.Subscriptions(r.Context(), c.project.ID, r.PathValue("uid"))
	if err != nil {
		return err
	}
	items := make([]wire.SubscriptionDoc, 0, len(subs))
	for _, sub := range subs {
		out, err := s.withHealth(r, sub)
		if err != nil {
			return err
		}
		items = append(items, out)
	}
	respond(w, r, http.StatusOK, wire.SubscriptionList{Subscriptions: wire.Items[wire.SubscriptionDoc]{Items: items}})
	return nil
}

func (s *Server) putSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	if _, err := s.ownedSubscription(r, c); err != nil {
		return err // a stranger's subscription is a 404 before its body is read
	}
	var req wire.SubscriptionDoc
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if err := s.notify.CheckSubscriber(r.Context(), c.project.ID, r.PathValue("uid")); err != nil {
		return fromDomain("subscriptions", err)
	}
	in, err := s.subscriptionInput(c.project.ID, r.PathValue("uid"), req.Subscription)
	if err != nil {
		return err
	}
	sub, err := s.notify.UpdateSubscription(r.Context(), c.project.ID, r.PathValue("uid"), r.PathValue("sid"), in)
	if err != nil {
		return fromDomain("subscriptions", err)
	}
	return s.respondSubscription(w, r, http.StatusOK, sub)
}

func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.notify.DeleteSubscription(r.Context(), c.project.ID, r.PathValue("uid"), r.PathValue("sid")); err != nil {
		return fromDomain("subscriptions", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sendSubscription (extension) runs the subscription now through the same
// pipeline as its schedule, whatever its condition says, and answers 202 with
// the run's URI.
func (s *Server) sendSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	run, err := s.notify.SendNow(r.Context(), c.project.ID, uid, r.PathValue("sid"), profileURI(c.UserID))
	if err != nil {
		return fromDomain("subscriptions", err)
	}
	uri := subscriptionURI(c.project.ID, uid, run.SubscriptionID) + "/runs/" + run.ID
	w.Header().Set("Location", uri)
	respond(w, r, http.StatusAccepted, map[string]any{"uri": uri, "state": run.State})
	return nil
}

// previewSubscription (extension) evaluates the condition and renders the
// message now, and says what would go to which channel; nothing is sent.
// ?recipient=<profile URI or address> previews it as one of its recipients:
// a member, or an address of its burst.
func (s *Server) previewSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	if s.previewer == nil {
		return newError(http.StatusServiceUnavailable, classUnavailable, "subscriptions", "Preview is not available: the engine is not running")
	}
	recipient := r.URL.Query().Get("recipient")
	if len(recipient) > 1024 {
		return badRequest("api", "Query parameter %s is too long", "recipient")
	}
	if uid, ok := strings.CutPrefix(recipient, "/svc/account/profile/"); ok {
		recipient = uid
	}
	p, err := s.previewer.Preview(r.Context(), sub, recipient)
	var refusal *notify.Refusal
	switch {
	case errors.As(err, &refusal):
		return forbidden("subscriptions", "The subscription cannot be evaluated: %s", refusal.Reason("its owner"))
	case errors.Is(err, engine.ErrNoRecipient):
		return notFound("subscriptions", "Recipient %s not found: %s", r.URL.Query().Get("recipient"), err.Error())
	case err != nil:
		return newError(http.StatusBadGateway, classUnavailable, "subscriptions", "The subscription could not be evaluated: %s", err.Error())
	}
	channels := make([]map[string]string, 0, len(p.Channels))
	for _, ch := range p.Channels {
		channels = append(channels, map[string]string{"channel": channelURI(ch.Owner, ch.ID), "kind": ch.Kind,
			"to": s.notify.Recipient(ch)})
	}
	attachments := make([]map[string]any, 0, len(p.Attachments))
	for _, a := range p.Attachments {
		attachments = append(attachments, map[string]any{"report": a.Report, "formats": a.Formats})
	}
	out := map[string]any{
		"values": p.Values, "condition": p.Condition, "wouldSend": p.WouldSend, "resolved": p.Resolved,
		"subject": p.Subject, "text": p.Text, "html": p.HTML, "attachments": attachments, "channels": channels,
	}
	if p.Recipient != "" {
		out["recipient"] = recipientOf(p.Recipient, p.Addresses)
		out["filters"] = orEmpty(p.Filters)
		out["description"] = s.describe(r, sub.ProjectID, p.Filters)
		out["addresses"] = p.Addresses
	}
	respond(w, r, http.StatusOK, map[string]any{"preview": out})
	return nil
}

// describe writes a slice's conditions for people ("Region IN (East)").
func (s *Server) describe(r *http.Request, pid string, conds []string) []string {
	if s.analytics == nil || len(conds) == 0 {
		return orEmpty(conds)
	}
	return s.analytics.Describe(r.Context(), pid, conds)
}

// recipientOf names a recipient on the wire: a member by profile URI, an
// address as it is.
func recipientOf(who string, addresses []string) string {
	for _, a := range addresses {
		if strings.EqualFold(a, who) {
			return who
		}
	}
	return profileURI(who)
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// listRecipients (extension) lists who a subscription with recipients or a
// burst goes to now, as a fire would find them, each with the slice of the
// data they see, offset and limit (default 100, at most 1000) at a time:
// {"recipients":{"items":[{"user","address","addresses","filters","slice"}],
// "paging","total","slices","skipped","skips","rows"}}.
func (s *Server) listRecipients(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	offset, limit, _, err := paging(r, 100, 1000)
	if err != nil {
		return err
	}
	if s.previewer == nil {
		return newError(http.StatusServiceUnavailable, classUnavailable, "subscriptions", "Recipients are not available: the engine is not running")
	}
	list, err := s.previewer.Recipients(r.Context(), sub)
	var refusal *notify.Refusal
	switch {
	case errors.As(err, &refusal):
		return forbidden("subscriptions", "The subscription cannot be evaluated: %s", refusal.Reason("its owner"))
	case err != nil:
		return newError(http.StatusBadGateway, classUnavailable, "subscriptions", "The recipients could not be read: %s", err.Error())
	}
	page := list.Items[min(offset, len(list.Items)):min(offset+limit, len(list.Items))]
	items := make([]map[string]any, len(page))
	described := map[int][]string{}
	for i, it := range page {
		if _, ok := described[it.Slice]; !ok {
			described[it.Slice] = s.describe(r, sub.ProjectID, it.Filters)
		}
		item := map[string]any{"addresses": orEmpty(it.Addresses), "filters": orEmpty(it.Filters), "slice": it.Slice,
			"description": described[it.Slice]}
		if it.Member != "" {
			item["user"] = profileURI(it.Member)
		} else if len(it.Addresses) > 0 {
			item["address"] = it.Addresses[0]
		}
		items[i] = item
	}
	skips := make([]wire.Skip, len(list.Skips))
	for i, sk := range list.Skips {
		skips[i] = skipJSON(sk)
	}
	respond(w, r, http.StatusOK, map[string]any{"recipients": map[string]any{
		"items": items, "paging": pageOf(r.URL.Path, offset, limit, len(items), len(list.Items), ""),
		"total": len(list.Items), "slices": list.Slices, "skipped": list.Skipped, "skips": skips, "rows": list.Rows,
	}})
	return nil
}

// skipJSON is a skipped recipient as the API shows it.
func skipJSON(sk notify.Skip) wire.Skip {
	out := wire.Skip{Reason: sk.Reason, Row: max(sk.Row, 0), Address: sk.Address}
	if sk.Recipient != "" {
		out.User = profileURI(sk.Recipient)
	}
	return out
}
