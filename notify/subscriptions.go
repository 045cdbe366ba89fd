package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/engine/cron"
	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

var exportFormats = []string{"PDF", "CSV", "PNG", "XLS", "XLSX"}

// objectIn returns the object id of uri when it is an object URI of project
// pid, /svc/md/<pid>/obj/<id>: how expressions (f:executeMetric) and a
// subscription name metadata objects.
func objectIn(pid, uri string) (id string, ok bool) {
	p, id, ok := wire.ParseObjURI(uri)
	return id, ok && p == pid
}

// The span and the number of fires over which the triggers of one subscription are checked
// together against the minimum interval.
const (
	unionHorizon = 366 * 24 * time.Hour
	unionFires   = 100_000
)

const subRoot = "subscription"

// CreateSubscription validates in as a subscription of owner in project
// and stores it.
func (s *Service) CreateSubscription(ctx context.Context, projectID, owner string, in SubscriptionInput) (store.Subscription, error) {
	if err := s.CheckSubscriber(ctx, projectID, owner); err != nil {
		return store.Subscription{}, err
	}
	sub, err := s.parseSubscription(ctx, projectID, owner, in)
	if err != nil {
		return sub, err
	}
	if sub.Paused, err = s.parsePauses(in, owner, sub, nil); err != nil {
		return sub, err
	}
	now := s.now()
	sub.ID, sub.ProjectID, sub.Owner, sub.Created, sub.Updated = store.NewHexID(), projectID, owner, now, now
	if err := s.create(ctx, sub); err != nil {
		return store.Subscription{}, err
	}
	return sub, nil
}

// create stores a validated subscription and tells the scheduler.
func (s *Service) create(ctx context.Context, sub store.Subscription) error {
	var qe *store.QuotaError
	switch err := s.st.CreateSubscription(ctx, sub, s.quota()); {
	case errors.Is(err, store.ErrNotFound):
		return conflict("A channel of the subscription was deleted meanwhile; try again")
	case errors.As(err, &qe):
		return quotaReached(qe)
	case err != nil:
		return err
	}
	s.changed(sub.ID)
	return nil
}

// Subscription returns subscription id of owner in project.
func (s *Service) Subscription(ctx context.Context, projectID, owner, id string) (store.Subscription, error) {
	sub, err := s.st.SubscriptionByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sub.Owner != owner || sub.ProjectID != projectID)) {
		return store.Subscription{}, notFound("Subscription %s not found", id)
	}
	return sub, err
}

// Subscriptions lists the subscriptions of owner in project.
func (s *Service) Subscriptions(ctx context.Context, projectID, owner string) ([]store.Subscription, error) {
	return s.st.Subscriptions(ctx, projectID, owner)
}

// Health is what the service knows of a subscription's health.
type Health struct {
	Healthy        bool
	FailuresInARow int
}

// Health returns the health of subscription id.
func (s *Service) Health(ctx context.Context, id string) (Health, error) {
	st, err := s.st.State(ctx, id)
	return Health{Healthy: !st.Unhealthy, FailuresInARow: st.Failures}, err
}

// UpdateSubscription replaces subscription id of owner in project with in.
func (s *Service) UpdateSubscription(ctx context.Context, projectID, owner, id string, in SubscriptionInput) (store.Subscription, error) {
	old, err := s.Subscription(ctx, projectID, owner, id)
	if err != nil {
		return old, err
	}
	if err := s.CheckSubscriber(ctx, projectID, owner); err != nil {
		return old, err
	}
	sub, err := s.parseSubscription(ctx, projectID, owner, in)
	if err != nil {
		return sub, err
	}
	if sub.Paused, err = s.parsePauses(in, owner, sub, old.Paused); err != nil {
		return sub, err
	}
	sub.ID, sub.ProjectID, sub.Owner, sub.Created, sub.Updated = old.ID, old.ProjectID, old.Owner, old.Created, s.now()
	if err := s.st.UpdateSubscription(ctx, sub); errors.Is(err, store.ErrNotFound) {
		return sub, conflict("The subscription or one of its channels was deleted meanwhile")
	} else if err != nil {
		return sub, err
	}
	s.changed(sub.ID)
	s.callOffStopped(ctx, old, sub)
	return sub, nil
}

// callOffStopped calls off what sub had pending for what the update from old
// stopped: the whole subscription once paused, or a channel taken off it or
// paused.
func (s *Service) callOffStopped(ctx context.Context, old, sub store.Subscription) {
	if old.Enabled && !sub.Enabled {
		s.callOff(ctx, sub.ID, "", "called off: the subscription was paused")
		return
	}
	for _, c := range old.Channels {
		_, wasPaused := old.Paused[c]
		_, paused := sub.Paused[c]
		switch {
		case !slices.Contains(sub.Channels, c):
			s.callOff(ctx, sub.ID, c, "called off: the channel was taken off the subscription")
		case paused && !wasPaused:
			s.callOff(ctx, sub.ID, c, "called off: the channel was paused")
		}
	}
}

// DeleteSubscription deletes subscription id of owner in project.
func (s *Service) DeleteSubscription(ctx context.Context, projectID, owner, id string) error {
	sub, err := s.Subscription(ctx, projectID, owner, id)
	if err != nil {
		return err
	}
	s.callOff(ctx, sub.ID, "", "called off: the subscription was deleted")
	if err := s.st.DeleteSubscription(ctx, sub.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	s.changed(sub.ID)
	return nil
}

// parseSubscription validates in for project and owner. Every error names
// the field's path. The objects the subscription names, and what running it
// asks of its owner, go through the decision the engine takes at every fire.
func (s *Service) parseSubscription(ctx context.Context, pid, owner string, in SubscriptionInput) (store.Subscription, error) {
	var sub store.Subscription
	if strings.TrimSpace(in.Title) == "" {
		return sub, invalid(subRoot+".meta.title", "is required")
	}
	if utf8.RuneCountInString(in.Title) > 255 {
		return sub, invalid(subRoot+".meta.title", "must be at most 255 characters")
	}
	sub.Title = in.Title
	var err error
	if sub.Def.Triggers, err = s.parseTriggers(in); err != nil {
		return sub, err
	}
	if in.Condition == nil {
		return sub, invalid(subRoot+".condition.condition.expression", "is required")
	}
	sub.Def.Condition = *in.Condition
	cond, err := jexl.CompileCondition(sub.Def.Condition)
	if err != nil {
		return sub, invalid(subRoot+".condition.condition.expression", err.Error())
	}
	var needs Needs
	if err := nameMetrics(&needs, subRoot+".condition.condition.expression", pid, cond.Metrics()); err != nil {
		return sub, err
	}
	if sub.Def.Message, err = parseTemplate(&needs, subRoot+".message.template.expression", pid, in.Message, true); err != nil {
		return sub, err
	}
	if sub.Def.MessageHTML, err = parseHTML(&needs, subRoot+".message.html.expression", pid, in.Message); err != nil {
		return sub, err
	}
	if sub.Def.Subject, err = parseTemplate(&needs, subRoot+".subject.template.expression", pid, in.Subject, false); err != nil {
		return sub, err
	}
	if in.Subject.HTML != nil {
		return sub, invalid(subRoot+".subject.html", "is not allowed: a subject is plain text")
	}
	if in.Resolved.HTML != nil {
		return sub, invalid(subRoot+".resolvedMessage.html", "is not allowed: the all-clear is plain text")
	}
	if sub.Channels, err = s.parseChannels(ctx, owner, in.Channels, in.Recipients != nil || in.Burst != nil); err != nil {
		return sub, err
	}
	if sub.Def.Attachments, err = parseAttachments(&needs, pid, in); err != nil {
		return sub, err
	}
	sub.Enabled = in.Enabled == nil || *in.Enabled
	sub.Def.FireMode = store.FireAlways
	if in.FireMode != nil {
		if *in.FireMode != store.FireAlways && *in.FireMode != store.FireOnChange {
			return sub, invalid(subRoot+".fireMode", "must be always or onChange")
		}
		sub.Def.FireMode = *in.FireMode
	}
	const resolved = subRoot + ".resolvedMessage.template.expression"
	if sub.Def.Resolved, err = parseTemplate(&needs, resolved, pid, in.Resolved, false); err != nil {
		return sub, err
	}
	if sub.Def.Resolved != "" && sub.Def.FireMode != store.FireOnChange {
		return sub, invalid(resolved, "needs fireMode onChange: it is sent when the condition stops holding")
	}
	if err := parseChecks(in, &sub.Def); err != nil {
		return sub, err
	}
	if err := s.parseNewRows(ctx, pid, in, sub.Def.Attachments); err != nil {
		return sub, err
	}
	if err := s.parsePrevious(ctx, &needs, pid, sub.Def); err != nil {
		return sub, err
	}
	if err := s.parseAudience(ctx, pid, owner, in, &sub, &needs); err != nil {
		return sub, err
	}
	return sub, s.authorizeOwner(ctx, pid, owner, needs)
}

// FireNeeds is what firing sub asks of its owner: to be an enabled member,
// to execute (it evaluates metrics, its condition's and templates', or
// attaches reports), to export (it attaches reports), and to read each of
// those objects. metrics are the metrics its condition and templates
// evaluate.
func FireNeeds(sub store.Subscription, metrics []string) Needs {
	n := Needs{Member: true}
	for _, uri := range metrics {
		n.Objects = append(n.Objects, Metric(uri, ""))
	}
	for _, a := range sub.Def.Attachments {
		n.Objects = append(n.Objects, Report(a.Report, ""))
	}
	n.Execute, n.Export = len(n.Objects) > 0, len(sub.Def.Attachments) > 0
	if sub.Def.Burst != nil {
		n.Objects = append(n.Objects, Report(sub.Def.Burst.Report, ""))
		n.Execute = true
	}
	return n
}

// authorizeOwner refuses a subscription that its owner could not have fire:
// the decision the engine takes at every fire, before the subscription is
// saved. A refusal names the field that asks for what the owner may not do.
func (s *Service) authorizeOwner(ctx context.Context, pid, owner string, needs Needs) error {
	needs.Member = true
	for _, n := range needs.Objects {
		needs.Execute = true
		// The report a burst reads its recipients from is executed, not exported.
		needs.Export = needs.Export || n.Noun == "report" && !strings.HasPrefix(n.Field, subRoot+".burst")
	}
	st, err := s.access.UserStanding(ctx, pid, owner)
	if err != nil {
		return err
	}
	objects, err := s.access.Objects(ctx, pid, needs)
	if err != nil {
		return err
	}
	r := Decide(st, needs, objects)
	if r == nil {
		return nil
	}
	switch r.Code {
	case NotMember:
		return forbidden("User %s is not an enabled member of project %s", owner, pid)
	case MayNotExecute:
		return invalid(needs.Objects[0].Field, "asks the subscription's owner to execute reports, which the owner's roles do not allow")
	case MayNotExport:
		return invalid(subRoot+".attachments", "asks the subscription's owner to export reports, which the owner's roles do not allow")
	}
	n, o := r.Named, r.Object
	switch {
	case n.Noun == "metric" && !(o.Found && o.Category == "metric"):
		return invalid(n.Field, fmt.Sprintf("runs f:executeMetric('%s'), which names no metric of this project", n.URI))
	case n.Noun == "report" && !o.Found:
		return invalid(n.Field, "names no report or report definition of this project")
	case !slices.Contains(n.Categories, o.Category):
		return invalid(n.Field, "names no report or report definition of this project")
	}
	return invalid(n.Field, r.Reason("subscription's owner"))
}

// parseAttachments parses the attachments, naming each report in needs.
func parseAttachments(needs *Needs, pid string, in SubscriptionInput) ([]store.ReportAttachment, error) {
	var out []store.ReportAttachment
	for i, a := range in.Attachments {
		p := fmt.Sprintf("%s.attachments[%d]", subRoot, i)
		if _, ok := objectIn(pid, a.Report); !ok {
			return nil, invalid(p+".report", "must be a report URI of this project, /svc/md/"+pid+"/obj/<id>")
		}
		needs.Objects = append(needs.Objects, Report(a.Report, p+".report"))
		if len(a.Formats) == 0 {
			return nil, invalid(p+".formats", "must name at least one of PDF, CSV, PNG, XLS")
		}
		var formats []string
		for j, f := range a.Formats {
			f = strings.ToUpper(f)
			if !slices.Contains(exportFormats, f) {
				return nil, invalid(fmt.Sprintf("%s.formats[%d]", p, j), "must be one of PDF, CSV, PNG, XLS")
			}
			if f == "XLSX" {
				f = "XLS"
			}
			if slices.Contains(formats, f) {
				return nil, invalid(fmt.Sprintf("%s.formats[%d]", p, j), "names "+f+" twice")
			}
			formats = append(formats, f)
		}
		out = append(out, store.ReportAttachment{Report: a.Report, Formats: formats})
	}
	return out, nil
}

func (s *Service) parseTriggers(in SubscriptionInput) ([]store.Trigger, error) {
	if len(in.Triggers) == 0 {
		return nil, invalid(subRoot+".triggers", "must hold at least one timerEvent")
	}
	if len(in.Triggers) > 20 {
		return nil, invalid(subRoot+".triggers", "may hold at most 20 triggers")
	}
	var out []store.Trigger
	var zs []cron.Zoned
	for i, t := range in.Triggers {
		p := fmt.Sprintf("%s.triggers[%d].timerEvent", subRoot, i)
		if t.Cron == nil {
			return nil, invalid(p+".cronExpression", "is required")
		}
		tz := s.cfg.DefaultTimezone
		if t.Timezone != nil {
			tz = *t.Timezone
		}
		trigger := store.Trigger{Cron: *t.Cron, Timezone: tz}
		z, err := ParseTrigger(trigger)
		var te *TriggerError
		if errors.As(err, &te) {
			return nil, invalid(p+"."+te.Field, te.Message)
		}
		if gap := z.Schedule.MinGap(); gap < s.cfg.MinInterval {
			return nil, invalid(p+".cronExpression", fmt.Sprintf("fires as often as every %s; the shortest interval allowed is %s",
				gap, s.cfg.MinInterval))
		}
		out = append(out, trigger)
		zs = append(zs, z)
	}
	if len(zs) > 1 {
		// Each trigger keeps the interval; together they might not. The walk covers the coming
		// year, or its first unionFires fires, whichever ends first.
		if gap, _, _ := cron.UnionGap(zs, s.now(), unionHorizon, unionFires); gap < s.cfg.MinInterval {
			return nil, invalid(subRoot+".triggers", fmt.Sprintf("together fire as often as every %s; the shortest interval allowed is %s",
				gap, s.cfg.MinInterval))
		}
	}
	return out, nil
}

// TriggerError is a trigger that does not parse: Field is cronExpression or timezone.
type TriggerError struct {
	Field, Message string
}

func (e *TriggerError) Error() string { return e.Field + ": " + e.Message }

// ParseTrigger parses a stored trigger into its schedule and zone; its error is
// a *TriggerError. The API refuses such triggers, and the scheduler skips, with a
// logged reason, any that a store written by an older version still holds.
func ParseTrigger(t store.Trigger) (cron.Zoned, error) {
	sched, err := cron.Parse(t.Cron)
	if err != nil {
		return cron.Zoned{}, &TriggerError{Field: "cronExpression", Message: err.Error()}
	}
	loc, err := time.LoadLocation(t.Timezone)
	if err != nil || t.Timezone == "" || t.Timezone == "Local" || strings.HasPrefix(t.Timezone, "/") {
		return cron.Zoned{}, &TriggerError{Field: "timezone", Message: "must be an IANA time zone such as Europe/Prague"}
	}
	return cron.Zoned{Schedule: sched, Location: loc}, nil
}

// parseTemplate parses a text template, naming the metrics it runs in needs.
func parseTemplate(needs *Needs, path, pid string, in TemplateInput, required bool) (string, error) {
	if in.Text == nil {
		if required {
			return "", invalid(path, "is required")
		}
		return "", nil
	}
	src := *in.Text
	if required && strings.TrimSpace(src) == "" {
		return "", invalid(path, "must not be empty")
	}
	tpl, err := jexl.ParseTemplate(src)
	if err != nil {
		return "", invalid(path, err.Error())
	}
	return src, nameMetrics(needs, path, pid, tpl.Metrics())
}

// parseHTML validates the HTML template of a message, if it has one.
func parseHTML(needs *Needs, path, pid string, in TemplateInput) (string, error) {
	if in.HTML == nil {
		return "", nil
	}
	if strings.TrimSpace(*in.HTML) == "" {
		return "", invalid(path, "must not be empty; leave html out to show the text message")
	}
	src := *in.HTML
	tpl, err := jexl.ParseTemplate(src)
	if err != nil {
		return "", invalid(path, err.Error())
	}
	return src, nameMetrics(needs, path, pid, tpl.Metrics())
}

// nameMetrics checks that every metric URI is an object URI of project pid
// and names it in needs, whose decision checks that it is a metric the owner
// may read.
func nameMetrics(needs *Needs, path, pid string, uris []string) error {
	for _, u := range uris {
		p, _, ok := wire.ParseObjURI(u)
		if !ok {
			return invalid(path, fmt.Sprintf("runs f:executeMetric('%s'), which is not a metric URI /svc/md/%s/obj/<id>", u, pid))
		}
		if p != pid {
			return invalid(path, fmt.Sprintf("runs f:executeMetric('%s'), a metric of another project", u))
		}
		needs.Objects = append(needs.Objects, Metric(u, path))
	}
	return nil
}

// parsePauses returns the pauses of sub (whose channels are parsed) from
// in, keeping who paused a channel and when from old; without pauses in in,
// the old pauses of the channels sub keeps.
func (s *Service) parsePauses(in SubscriptionInput, owner string, sub store.Subscription, old map[string]store.Pause) (map[string]store.Pause, error) {
	out := map[string]store.Pause{}
	if in.Paused == nil {
		for c, p := range old {
			if slices.Contains(sub.Channels, c) {
				out[c] = p
			}
		}
		return out, nil
	}
	for i, c := range *in.Paused {
		if !slices.Contains(sub.Channels, c) {
			return nil, invalid(fmt.Sprintf("%s.pausedChannels[%d].channel", subRoot, i),
				"must be one of the subscription's channels")
		}
		p, ok := old[c]
		if !ok {
			p = store.Pause{By: owner, At: s.now().UTC().Truncate(time.Second)}
		}
		out[c] = p
	}
	return out, nil
}

// parseChannels checks that every channel id names a channel of owner, once.
func (s *Service) parseChannels(ctx context.Context, owner string, chans []string, others bool) ([]string, error) {
	if len(chans) == 0 && !others {
		return nil, invalid(subRoot+".channels", "must name at least one channel configuration, unless the subscription has recipients or a burst")
	}
	var ids []string
	for i, id := range chans {
		p := fmt.Sprintf("%s.channels[%d]", subRoot, i)
		ch, err := s.st.ChannelByID(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && ch.Owner != owner) {
			return nil, invalid(p, "names no channel configuration of the subscription's user")
		}
		if err != nil {
			return nil, err
		}
		if slices.Contains(ids, ch.ID) {
			return nil, invalid(p, "names a channel twice")
		}
		ids = append(ids, ch.ID)
	}
	return ids, nil
}
