package api

import (
	"cmp"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// listRuns is the run history of a subscription (extension), newest first.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return err
	}
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			return badRequest("api", "Query parameter %s must be a whole number of at least 1", "limit")
		}
		limit = min(limit, 1000)
	}
	offset := 0
	if v := r.URL.Query().Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 || offset > 1_000_000 {
			return badRequest("api", "Query parameter %s must be a whole number from 0 to 1000000", "offset")
		}
	}
	runs, err := s.store.SubscriptionRuns(r.Context(), sub.ID, limit, offset)
	if err != nil {
		return err
	}
	items := make([]wire.RunDoc, 0, len(runs))
	for _, run := range runs {
		rj, err := s.runJSON(r, sub, run, store.DeliveryQuery{Limit: runDeliveries})
		if err != nil {
			return err
		}
		items = append(items, wire.RunDoc{Run: rj})
	}
	respond(w, r, http.StatusOK, wire.RunList{Runs: wire.Items[wire.RunDoc]{Items: items}})
	return nil
}

// ownedRun loads run {rid} of subscription {sid}, or answers 404.
func (s *Server) ownedRun(r *http.Request, c *caller) (store.Subscription, store.Run, error) {
	sub, err := s.ownedSubscription(r, c)
	if err != nil {
		return sub, store.Run{}, err
	}
	run, err := s.store.RunByID(r.Context(), r.PathValue("rid"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && run.SubscriptionID != sub.ID) {
		return sub, run, notFound("subscriptions", "Run %s not found", r.PathValue("rid"))
	}
	return sub, run, err
}

// runDeliveries is how many deliveries of a run the run history shows at once.
const runDeliveries = 100

// getRun is one run of a subscription (extension), as the run history shows it:
// ?recipient= (a profile URI, or text an address contains) searches its deliveries,
// offset and limit (default 100, at most 1000) page them.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request, c *caller) error {
	sub, run, err := s.ownedRun(r, c)
	if err != nil {
		return err
	}
	offset, limit, _, err := paging(r, runDeliveries, 1000)
	if err != nil {
		return err
	}
	dq := store.DeliveryQuery{Offset: offset, Limit: limit}
	who := r.URL.Query().Get("recipient")
	if len(who) > 1024 {
		return badRequest("api", "Query parameter %s is too long", "recipient")
	}
	if uid, ok := strings.CutPrefix(who, "/svc/account/profile/"); ok {
		dq.Recipient = uid
	} else {
		dq.Address = who
	}
	rj, err := s.runJSON(r, sub, run, dq)
	if err != nil {
		return err
	}
	respond(w, r, http.StatusOK, wire.RunDoc{Run: rj})
	return nil
}

// runJSON is one run as the run history shows it.
func (s *Server) runJSON(r *http.Request, sub store.Subscription, run store.Run, dq store.DeliveryQuery) (wire.Run, error) {
	d := notify.Detail(run)
	rj := wire.Run{
		URI:         subscriptionURI(sub.ProjectID, sub.Owner, sub.ID) + "/runs/" + run.ID,
		ScheduledAt: timestamp(run.ScheduledAt), State: run.State, Trigger: cmp.Or(d.Trigger, notify.TriggerSchedule),
		By: d.By, Resolved: d.Resolved, Condition: d.Condition, Values: d.Values,
		Subject: d.Subject, Text: d.Text, Error: run.Error, Stage: d.Stage, Reason: d.Reason,
		TimingsMS: d.TimingsMS, Started: timestamp(run.Started), Deliveries: []wire.Delivery{},
		Skipped: d.Skipped, Audience: audienceOf(d.Audience),
	}
	if !run.Finished.IsZero() {
		rj.Finished = timestamp(run.Finished)
	}
	for _, c := range d.Paused {
		rj.PausedChannels = append(rj.PausedChannels, channelURI(sub.Owner, c))
	}
	for _, e := range d.Events {
		rj.Events = append(rj.Events, wire.RunEvent{Event: e.Event, Channel: channelURI(sub.Owner, e.Channel), By: e.By,
			Reason: e.Reason, At: e.At})
	}
	for _, a := range d.Files {
		rj.Attachments = append(rj.Attachments, wire.RunAttachment{Name: a.Name, ContentType: a.ContentType, Inline: a.ContentID != ""})
	}
	dels, total, err := s.store.RunDeliveryPage(r.Context(), run.ID, dq)
	if err != nil {
		return rj, err
	}
	if rj.DeliveryCounts, err = s.store.RunDeliveryCounts(r.Context(), run.ID); err != nil {
		return rj, err
	}
	rj.DeliveriesTotal = total
	for _, dl := range dels {
		dj := wire.Delivery{Kind: dl.Kind, State: dl.State, Address: dl.Address,
			Attempts: dl.Attempts, LastError: dl.LastError, ProviderID: dl.ProviderID}
		if dl.ChannelID != "" {
			dj.Channel = channelURI(sub.Owner, dl.ChannelID)
		}
		if dl.Recipient != "" {
			dj.Recipient = profileURI(dl.Recipient)
		}
		if !dl.SentAt.IsZero() {
			dj.SentAt = dl.SentAt.UTC().Format(time.DateTime)
		}
		rj.Deliveries = append(rj.Deliveries, dj)
	}
	return rj, nil
}

// audienceOf is what a run did with its recipients, as the run history shows it.
func audienceOf(a *notify.Audience) *wire.Audience {
	if a == nil {
		return nil
	}
	out := &wire.Audience{Recipients: a.Recipients, Slices: a.Slices, NotTriggered: a.NotTriggered, Empty: a.Empty, Rows: a.Rows}
	for _, sk := range a.Skips {
		out.Skips = append(out.Skips, skipJSON(sk))
	}
	for _, sd := range a.SliceDetails {
		out.SliceDetails = append(out.SliceDetails, wire.SliceDetail{Filters: sd.Filters, Recipients: sd.Recipients,
			Condition: sd.Condition, Values: sd.Values, Subject: sd.Subject, Error: sd.Error})
	}
	return out
}

// runFile serves an attachment of a run (extension): the i-th of the run's
// attachments, as the run history lists them.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request, c *caller) error {
	_, run, err := s.ownedRun(r, c)
	if err != nil {
		return err
	}
	files := notify.Detail(run).Files
	i, err := strconv.Atoi(r.PathValue("i"))
	if err != nil || i < 0 || i >= len(files) {
		return notFound("subscriptions", "Run %s has no attachment %s", run.ID, r.PathValue("i"))
	}
	err = s.serveFile(w, r, files[i])
	if errors.Is(err, os.ErrNotExist) {
		return newError(http.StatusGone, classNotFound, "subscriptions", "The file of attachment %s is no longer kept", files[i].Name)
	}
	return err
}
