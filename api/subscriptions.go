package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/engine/cron"
	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
)

// Notifier is told of every change of a subscription, so the scheduler
// applies it at once.
type Notifier interface {
	SubscriptionChanged(id string)
}

type nopNotifier struct{}

func (nopNotifier) SubscriptionChanged(string) {}

// Previewer evaluates a subscription now without sending anything.
type Previewer interface {
	Preview(ctx context.Context, sub store.Subscription) (engine.Preview, error)
}

type subscriptionRequest struct {
	Subscription *subscriptionBody `json:"subscription"`
}

type templateJSON struct {
	Template *struct {
		Expression *string `json:"expression"`
	} `json:"template"`
}

type subscriptionBody struct {
	Triggers []struct {
		TimerEvent *struct {
			CronExpression *string `json:"cronExpression"`
			Timezone       *string `json:"timezone"`
		} `json:"timerEvent"`
	} `json:"triggers"`
	Condition *struct {
		Condition *struct {
			Expression *string `json:"expression"`
		} `json:"condition"`
	} `json:"condition"`
	Message     *templateJSON `json:"message"`
	Subject     *templateJSON `json:"subject"`
	Channels    []string      `json:"channels"`
	Attachments []struct {
		Report  string   `json:"report"`
		Formats []string `json:"formats"`
	} `json:"attachments"`
	Enabled  *bool   `json:"enabled"`
	FireMode *string `json:"fireMode"`
	Meta     *metaIn `json:"meta"`
	// Health is reported by the service; a PUT may echo it back. Ignored.
	Health any `json:"health"`
}

var (
	objURI         = regexp.MustCompile(`^/svc/md/([a-z0-9]+)/obj/([A-Za-z0-9_.-]+)$`)
	exportFormats  = []string{"PDF", "CSV", "PNG", "XLS", "XLSX"}
	channelURIForm = regexp.MustCompile(`^/svc/account/profile/([A-Za-z0-9]+)/channelConfigurations/([A-Za-z0-9]+)$`)
)

func subscriptionURI(pid, uid, sid string) string {
	return projectURI(pid) + "/users/" + uid + "/subscriptions/" + sid
}

// parseSubscription validates a subscription body for project pid and owner
// uid. Every error names the field's path.
func (s *Server) parseSubscription(r *http.Request, pid, uid string, in *subscriptionBody) (store.Subscription, error) {
	const root = "subscription"
	var sub store.Subscription
	if in == nil {
		return sub, badField(root, "is required")
	}
	if in.Meta == nil || strings.TrimSpace(in.Meta.Title) == "" {
		return sub, badField(root+".meta.title", "is required")
	}
	if utf8.RuneCountInString(in.Meta.Title) > 255 {
		return sub, badField(root+".meta.title", "must be at most 255 characters")
	}
	sub.Title = in.Meta.Title
	var err error
	if sub.Def.Triggers, err = s.parseTriggers(in); err != nil {
		return sub, err
	}
	if in.Condition == nil || in.Condition.Condition == nil || in.Condition.Condition.Expression == nil {
		return sub, badField(root+".condition.condition.expression", "is required")
	}
	sub.Def.Condition = *in.Condition.Condition.Expression
	cond, err := jexl.CompileCondition(sub.Def.Condition)
	if err != nil {
		return sub, badField(root+".condition.condition.expression", err.Error())
	}
	if err := s.checkMetrics(r, root+".condition.condition.expression", pid, cond.Metrics()); err != nil {
		return sub, err
	}
	if sub.Def.Message, err = s.parseTemplate(r, root+".message.template.expression", pid, in.Message, true); err != nil {
		return sub, err
	}
	if sub.Def.Subject, err = s.parseTemplate(r, root+".subject.template.expression", pid, in.Subject, false); err != nil {
		return sub, err
	}
	if sub.Channels, err = s.parseChannels(r, uid, in.Channels); err != nil {
		return sub, err
	}
	for i, a := range in.Attachments {
		p := fmt.Sprintf("%s.attachments[%d]", root, i)
		m := objURI.FindStringSubmatch(a.Report)
		if m == nil || m[1] != pid {
			return sub, badField(p+".report", "must be a report URI of this project, /svc/md/"+pid+"/obj/<id>")
		}
		switch cat, err := s.objectCategory(r, pid, m[2]); {
		case err != nil:
			return sub, err
		case cat != "report" && cat != "reportDefinition":
			return sub, badField(p+".report", "names no report or report definition of this project")
		}
		if len(a.Formats) == 0 {
			return sub, badField(p+".formats", "must name at least one of PDF, CSV, PNG, XLS")
		}
		var formats []string
		for j, f := range a.Formats {
			f = strings.ToUpper(f)
			if !slices.Contains(exportFormats, f) {
				return sub, badField(fmt.Sprintf("%s.formats[%d]", p, j), "must be one of PDF, CSV, PNG, XLS")
			}
			if f == "XLSX" {
				f = "XLS"
			}
			if slices.Contains(formats, f) {
				return sub, badField(fmt.Sprintf("%s.formats[%d]", p, j), "names "+f+" twice")
			}
			formats = append(formats, f)
		}
		sub.Def.Attachments = append(sub.Def.Attachments, store.ReportAttachment{Report: a.Report, Formats: formats})
	}
	sub.Enabled = in.Enabled == nil || *in.Enabled
	sub.Def.FireMode = store.FireAlways
	if in.FireMode != nil {
		if *in.FireMode != store.FireAlways && *in.FireMode != store.FireOnChange {
			return sub, badField(root+".fireMode", "must be always or onChange")
		}
		sub.Def.FireMode = *in.FireMode
	}
	return sub, nil
}

func (s *Server) parseTriggers(in *subscriptionBody) ([]store.Trigger, error) {
	if len(in.Triggers) == 0 {
		return nil, badField("subscription.triggers", "must hold at least one timerEvent")
	}
	if len(in.Triggers) > 20 {
		return nil, badField("subscription.triggers", "may hold at most 20 triggers")
	}
	var out []store.Trigger
	var zs []cron.Zoned
	for i, t := range in.Triggers {
		p := fmt.Sprintf("subscription.triggers[%d].timerEvent", i)
		if t.TimerEvent == nil || t.TimerEvent.CronExpression == nil {
			return nil, badField(p+".cronExpression", "is required")
		}
		sched, err := cron.Parse(*t.TimerEvent.CronExpression)
		if err != nil {
			var ce *cron.Error
			if errors.As(err, &ce) {
				return nil, badField(p+".cronExpression", ce.Error())
			}
			return nil, badField(p+".cronExpression", err.Error())
		}
		if gap := sched.MinGap(); gap < s.minInterval {
			return nil, badField(p+".cronExpression", fmt.Sprintf("fires as often as every %s; the shortest interval allowed is %s",
				gap, s.minInterval))
		}
		tz := s.defaultTZ
		if t.TimerEvent.Timezone != nil {
			tz = *t.TimerEvent.Timezone
		}
		loc, err := time.LoadLocation(tz)
		if err != nil || tz == "" || tz == "Local" || strings.HasPrefix(tz, "/") {
			return nil, badField(p+".timezone", "must be an IANA time zone such as Europe/Prague")
		}
		out = append(out, store.Trigger{Cron: *t.TimerEvent.CronExpression, Timezone: tz})
		zs = append(zs, cron.Zoned{Schedule: sched, Location: loc})
	}
	if len(zs) > 1 {
		// Each trigger keeps the interval; together they might not. The walk covers the coming
		// year, or its first unionFires fires, whichever ends first.
		if gap, _, _ := cron.UnionGap(zs, s.now(), unionHorizon, unionFires); gap < s.minInterval {
			return nil, badField("subscription.triggers", fmt.Sprintf("together fire as often as every %s; the shortest interval allowed is %s",
				gap, s.minInterval))
		}
	}
	return out, nil
}

// The span and the number of fires over which the triggers of one subscription are checked
// together against the minimum interval.
const (
	unionHorizon = 366 * 24 * time.Hour
	unionFires   = 100_000
)

func (s *Server) parseTemplate(r *http.Request, path, pid string, in *templateJSON, required bool) (string, error) {
	if in == nil || in.Template == nil || in.Template.Expression == nil {
		if required {
			return "", badField(path, "is required")
		}
		return "", nil
	}
	src := *in.Template.Expression
	if required && strings.TrimSpace(src) == "" {
		return "", badField(path, "must not be empty")
	}
	tpl, err := jexl.ParseTemplate(src)
	if err != nil {
		return "", badField(path, err.Error())
	}
	return src, s.checkMetrics(r, path, pid, tpl.Metrics())
}

// checkMetrics checks that every metric URI names a metric of project pid.
func (s *Server) checkMetrics(r *http.Request, path, pid string, uris []string) error {
	for _, u := range uris {
		m := objURI.FindStringSubmatch(u)
		if m == nil {
			return badField(path, fmt.Sprintf("runs f:executeMetric('%s'), which is not a metric URI /svc/md/%s/obj/<id>", u, pid))
		}
		if m[1] != pid {
			return badField(path, fmt.Sprintf("runs f:executeMetric('%s'), a metric of another project", u))
		}
		cat, err := s.objectCategory(r, pid, m[2])
		if err != nil {
			return err
		}
		if cat != "metric" {
			return badField(path, fmt.Sprintf("runs f:executeMetric('%s'), which names no metric of this project", u))
		}
	}
	return nil
}

// objectCategory returns the category of metadata object id in project pid,
// or "" when there is none.
func (s *Server) objectCategory(r *http.Request, pid, id string) (string, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return "", nil
	}
	o, err := s.store.ObjectByID(r.Context(), pid, n)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return o.Category, err
}

// parseChannels checks that every channel URI names a channel of user uid.
func (s *Server) parseChannels(r *http.Request, uid string, uris []string) ([]string, error) {
	if len(uris) == 0 {
		return nil, badField("subscription.channels", "must name at least one channel configuration")
	}
	var ids []string
	for i, u := range uris {
		p := fmt.Sprintf("subscription.channels[%d]", i)
		m := channelURIForm.FindStringSubmatch(u)
		if m == nil {
			return nil, badField(p, "must be a channel configuration URI /svc/account/profile/<user id>/channelConfigurations/<id>")
		}
		ch, err := s.store.ChannelByID(r.Context(), m[2])
		if errors.Is(err, store.ErrNotFound) || (err == nil && (ch.Owner != uid || m[1] != uid)) {
			return nil, badField(p, "names no channel configuration of the subscription's user")
		}
		if err != nil {
			return nil, err
		}
		if slices.Contains(ids, ch.ID) {
			return nil, badField(p, "names a channel twice")
		}
		ids = append(ids, ch.ID)
	}
	return ids, nil
}

// withHealth is the subscription record with what the engine knows of its health.
func (s *Server) withHealth(r *http.Request, sub store.Subscription) (map[string]any, error) {
	st, err := s.store.State(r.Context(), sub.ID)
	if err != nil {
		return nil, err
	}
	out := subscriptionJSON(sub)
	out["subscription"].(map[string]any)["health"] = map[string]any{"healthy": !st.Unhealthy, "failuresInARow": st.Failures}
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
	}
	body := map[string]any{
		"triggers":    triggers,
		"condition":   map[string]any{"condition": map[string]string{"expression": sub.Def.Condition}},
		"message":     map[string]any{"template": map[string]string{"expression": sub.Def.Message}},
		"channels":    channels,
		"attachments": attachments,
		"enabled":     sub.Enabled,
		"fireMode":    sub.Def.FireMode,
		"meta": map[string]string{
			"title": sub.Title, "author": profileURI(sub.Owner), "category": "subscription",
			"created": timestamp(sub.Created), "updated": timestamp(sub.Updated),
			"uri": subscriptionURI(sub.ProjectID, sub.Owner, sub.ID),
		},
	}
	if sub.Def.Subject != "" {
		body["subject"] = map[string]any{"template": map[string]string{"expression": sub.Def.Subject}}
	}
	return map[string]any{"subscription": body}
}

// checkSubscriber answers 403 unless user {uid} is an enabled member of the project.
func (s *Server) checkSubscriber(r *http.Request, c *caller) error {
	m, err := s.store.Membership(r.Context(), c.project.ID, r.PathValue("uid"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Status != store.MemberEnabled) {
		return forbidden("subscriptions", "User %s is not an enabled member of project %s", r.PathValue("uid"), c.project.ID)
	}
	return err
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.checkSubscriber(r, c); err != nil {
		return err
	}
	var req subscriptionRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	uid := r.PathValue("uid")
	sub, err := s.parseSubscription(r, c.project.ID, uid, req.Subscription)
	if err != nil {
		return err
	}
	now := s.now()
	sub.ID, sub.ProjectID, sub.Owner, sub.Created, sub.Updated = store.NewHexID(), c.project.ID, uid, now, now
	var qe *store.QuotaError
	switch err := s.store.CreateSubscription(r.Context(), sub, s.quota); {
	case errors.Is(err, store.ErrNotFound):
		return conflict("subscriptions", "A channel of the subscription was deleted meanwhile; try again")
	case errors.As(err, &qe):
		return quotaReached("subscriptions", qe)
	case err != nil:
		return err
	}
	s.notifier.SubscriptionChanged(sub.ID)
	w.Header().Set("Location", subscriptionURI(sub.ProjectID, uid, sub.ID))
	return s.respondSubscription(w, r, http.StatusCreated, sub)
}

// ownedSubscription loads subscription {sid} of user {uid} in the project, or answers 404.
func (s *Server) ownedSubscription(r *http.Request, c *caller) (store.Subscription, error) {
	sub, err := s.store.SubscriptionByID(r.Context(), r.PathValue("sid"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sub.Owner != r.PathValue("uid") || sub.ProjectID != c.project.ID)) {
		return store.Subscription{}, notFound("subscriptions", "Subscription %s not found", r.PathValue("sid"))
	}
	return sub, err
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	return s.respondSubscription(w, r, http.StatusOK, sub)
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request, c *caller) error {
	subs, err := s.store.Subscriptions(r.Context(), c.project.ID, r.PathValue("uid"))
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
	old, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	if err := s.checkSubscriber(r, c); err != nil {
		return err
	}
	var req subscriptionRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	sub, err := s.parseSubscription(r, c.project.ID, old.Owner, req.Subscription)
	if err != nil {
		return err
	}
	sub.ID, sub.ProjectID, sub.Owner, sub.Created, sub.Updated = old.ID, old.ProjectID, old.Owner, old.Created, s.now()
	if err := s.store.UpdateSubscription(r.Context(), sub); errors.Is(err, store.ErrNotFound) {
		return conflict("subscriptions", "The subscription or one of its channels was deleted meanwhile")
	} else if err != nil {
		return err
	}
	s.notifier.SubscriptionChanged(sub.ID)
	return s.respondSubscription(w, r, http.StatusOK, sub)
}

func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteSubscription(r.Context(), sub.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	s.notifier.SubscriptionChanged(sub.ID)
	w.WriteHeader(http.StatusNoContent)
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
	if err != nil {
		return newError(http.StatusBadGateway, classUnavailable, "subscriptions", "The subscription could not be evaluated: %s", err.Error())
	}
	channels := make([]map[string]string, 0, len(p.Channels))
	for _, ch := range p.Channels {
		to := ch.Config.To
		if ch.Kind == store.KindFeedChat {
			to = ch.Config.Username
		}
		channels = append(channels, map[string]string{"channel": channelURI(ch.Owner, ch.ID), "kind": ch.Kind, "to": to})
	}
	attachments := make([]map[string]any, 0, len(p.Attachments))
	for _, a := range p.Attachments {
		attachments = append(attachments, map[string]any{"report": a.Report, "formats": a.Formats})
	}
	respond(w, r, http.StatusOK, map[string]any{"preview": map[string]any{
		"values": p.Values, "condition": p.Condition, "wouldSend": p.WouldSend, "subject": p.Subject,
		"text": p.Text, "attachments": attachments, "channels": channels,
	}})
	return nil
}
