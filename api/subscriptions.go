package api

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// Previewer evaluates a subscription now without sending anything.
type Previewer interface {
	Preview(ctx context.Context, sub store.Subscription) (engine.Preview, error)
}

type subscriptionRequest struct {
	Subscription *notify.SubscriptionBody `json:"subscription"`
}

func subscriptionURI(pid, uid, sid string) string {
	return projectURI(pid) + "/users/" + uid + "/subscriptions/" + sid
}

// withHealth is the subscription record with what the engine knows of its health.
func (s *Server) withHealth(r *http.Request, sub store.Subscription) (map[string]any, error) {
	h, err := s.notify.Health(r.Context(), sub.ID)
	if err != nil {
		return nil, err
	}
	out := subscriptionJSON(sub)
	out["subscription"].(map[string]any)["health"] = map[string]any{"healthy": h.Healthy, "failuresInARow": h.FailuresInARow}
	return out, nil
}

func (s *Server) respondSubscription(w http.ResponseWriter, r *http.Request, status int, sub store.Subscription) error {
	out, err := s.withHealth(r, sub)
	if err != nil {
		return err
	}
	respond(w, r, status, out)
	return nil
}

func template(expr string) map[string]any {
	return map[string]any{"template": map[string]string{"expression": expr}}
}

// message is the message template, with its HTML template when it has one.
func message(def store.SubscriptionDef) map[string]any {
	m := template(def.Message)
	if def.MessageHTML != "" {
		m["html"] = map[string]string{"expression": def.MessageHTML}
	}
	return m
}

func subscriptionJSON(sub store.Subscription) map[string]any {
	triggers := make([]map[string]any, len(sub.Def.Triggers))
	for i, t := range sub.Def.Triggers {
		triggers[i] = map[string]any{"timerEvent": map[string]string{"cronExpression": t.Cron, "timezone": t.Timezone}}
	}
	channels := make([]string, len(sub.Channels))
	for i, c := range sub.Channels {
		channels[i] = channelURI(sub.Owner, c)
	}
	attachments := make([]map[string]any, len(sub.Def.Attachments))
	for i, a := range sub.Def.Attachments {
		attachments[i] = map[string]any{"report": a.Report, "formats": a.Formats}
		if a.NewRowsBy != "" {
			attachments[i]["newRowsBy"] = a.NewRowsBy
		}
	}
	body := map[string]any{
		"triggers":    triggers,
		"condition":   map[string]any{"condition": map[string]string{"expression": sub.Def.Condition}},
		"message":     message(sub.Def),
		"channels":    channels,
		"attachments": attachments,
		"enabled":     sub.Enabled,
		"fireMode":    sub.Def.FireMode,
		"onEmpty":     cmp.Or(sub.Def.OnEmpty, store.OnEmptySend),
		"sendWhen":    cmp.Or(sub.Def.SendWhen, store.SendAlways),
		"meta": map[string]string{
			"title": sub.Title, "author": profileURI(sub.Owner), "category": "subscription",
			"created": timestamp(sub.Created), "updated": timestamp(sub.Updated),
			"uri": subscriptionURI(sub.ProjectID, sub.Owner, sub.ID),
		},
	}
	if sub.Def.Subject != "" {
		body["subject"] = template(sub.Def.Subject)
	}
	if sub.Def.Resolved != "" {
		body["resolvedMessage"] = template(sub.Def.Resolved)
	}
	if len(sub.Paused) > 0 {
		paused := make([]notify.PausedChannel, 0, len(sub.Paused))
		for _, c := range sub.Channels {
			if p, ok := sub.Paused[c]; ok {
				paused = append(paused, notify.PausedChannel{Channel: channelURI(sub.Owner, c), By: p.By, At: timestamp(p.At)})
			}
		}
		body["pausedChannels"] = paused
	}
	return map[string]any{"subscription": body}
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req subscriptionRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	uid := r.PathValue("uid")
	sub, err := s.notify.CreateSubscription(r.Context(), c.project.ID, uid, req.Subscription)
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
	items := make([]map[string]any, 0, len(subs))
	for _, sub := range subs {
		out, err := s.withHealth(r, sub)
		if err != nil {
			return err
		}
		items = append(items, out)
	}
	respond(w, r, http.StatusOK, map[string]any{"subscriptions": map[string]any{"items": items}})
	return nil
}

func (s *Server) putSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	if _, err := s.ownedSubscription(r, c); err != nil {
		return err // a stranger's subscription is a 404 before its body is read
	}
	var req subscriptionRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	sub, err := s.notify.UpdateSubscription(r.Context(), c.project.ID, r.PathValue("uid"), r.PathValue("sid"), req.Subscription)
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
func (s *Server) previewSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	if s.previewer == nil {
		return newError(http.StatusServiceUnavailable, classUnavailable, "subscriptions", "Preview is not available: the engine is not running")
	}
	p, err := s.previewer.Preview(r.Context(), sub)
	var refusal *notify.Refusal
	if errors.As(err, &refusal) {
		return forbidden("subscriptions", "The subscription cannot be evaluated: %s", refusal.Reason("its owner"))
	}
	if err != nil {
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
	respond(w, r, http.StatusOK, map[string]any{"preview": map[string]any{
		"values": p.Values, "condition": p.Condition, "wouldSend": p.WouldSend, "resolved": p.Resolved,
		"subject": p.Subject, "text": p.Text, "html": p.HTML, "attachments": attachments, "channels": channels,
	}})
	return nil
}
