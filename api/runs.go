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
)

// runJSON is one run as the run history shows it. Attachment files stay
// inside the service: only their names and types are shown.
type runJSON struct {
	URI         string              `json:"uri"`
	ScheduledAt string              `json:"scheduledAt"`
	State       string              `json:"state"`
	Trigger     string              `json:"trigger"`            // schedule or manual
	By          string              `json:"by,omitempty"`       // who sent it now
	Resolved    bool                `json:"resolved,omitempty"` // the all-clear of an onChange subscription
	Condition   *bool               `json:"condition,omitempty"`
	Values      map[string]*float64 `json:"values,omitempty"`
	Subject     string              `json:"subject,omitempty"`
	Text        string              `json:"text,omitempty"`
	Attachments []attachmentJSON    `json:"attachments,omitempty"`
	Error       string              `json:"error,omitempty"`
	Stage       string              `json:"stage,omitempty"`
	Reason      string              `json:"reason,omitempty"`
	TimingsMS   map[string]int64    `json:"timingsMs,omitempty"`
	Started     string              `json:"started"`
	Finished    string              `json:"finished,omitempty"`
	Deliveries  []deliveryJSON      `json:"deliveries"`
	// DeliveryCounts counts the run's deliveries by state; DeliveriesTotal is
	// how many the listing selects, of which Deliveries is a page.
	DeliveryCounts  map[string]int `json:"deliveryCounts"`
	DeliveriesTotal int            `json:"deliveriesTotal"`
	// Skipped counts the recipients the run did not send to; Audience says
	// what it did with its recipients (extension).
	Skipped  int           `json:"skipped,omitempty"`
	Audience *audienceJSON `json:"audience,omitempty"`
	// PausedChannels are the channels the run did not send to because they are paused.
	PausedChannels []string `json:"pausedChannels,omitempty"`
	// Events happened after the run was handed over, such as an unsubscribe from its message.
	Events []notify.RunEvent `json:"events,omitempty"`
}

type attachmentJSON struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Inline      bool   `json:"inline,omitempty"` // an image the mail's HTML body shows (a chart), not a file of its own
}

type deliveryJSON struct {
	Channel string `json:"channel,omitempty"` // none for a recipient's e-mail
	Kind    string `json:"kind"`
	// Recipient is the member a delivery is for, and Address where it went in
	// place of its channel's own: a recipient's.
	Recipient  string `json:"recipient,omitempty"`
	Address    string `json:"address,omitempty"`
	State      string `json:"state"`
	Attempts   int    `json:"attempts"`
	LastError  string `json:"lastError,omitempty"`
	ProviderID string `json:"providerId,omitempty"`
	SentAt     string `json:"sentAt,omitempty"`
}

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
	items := make([]map[string]runJSON, 0, len(runs))
	for _, run := range runs {
		rj, err := s.runJSON(r, sub, run, store.DeliveryQuery{Limit: runDeliveries})
		if err != nil {
			return err
		}
		items = append(items, map[string]runJSON{"run": rj})
	}
	respond(w, r, http.StatusOK, map[string]any{"runs": map[string]any{"items": items}})
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
	respond(w, r, http.StatusOK, map[string]runJSON{"run": rj})
	return nil
}

func (s *Server) runJSON(r *http.Request, sub store.Subscription, run store.Run, dq store.DeliveryQuery) (runJSON, error) {
	d := notify.Detail(run)
	rj := runJSON{
		URI:         subscriptionURI(sub.ProjectID, sub.Owner, sub.ID) + "/runs/" + run.ID,
		ScheduledAt: timestamp(run.ScheduledAt), State: run.State, Trigger: cmp.Or(d.Trigger, notify.TriggerSchedule),
		By: d.By, Resolved: d.Resolved, Condition: d.Condition, Values: d.Values,
		Subject: d.Subject, Text: d.Text, Error: run.Error, Stage: d.Stage, Reason: d.Reason,
		TimingsMS: d.TimingsMS, Started: timestamp(run.Started), Deliveries: []deliveryJSON{},
		Skipped: d.Skipped, Audience: audienceOf(d.Audience),
	}
	if !run.Finished.IsZero() {
		rj.Finished = timestamp(run.Finished)
	}
	for _, c := range d.Paused {
		rj.PausedChannels = append(rj.PausedChannels, channelURI(sub.Owner, c))
	}
	for _, e := range d.Events {
		e.Channel = channelURI(sub.Owner, e.Channel)
		rj.Events = append(rj.Events, e)
	}
	for _, a := range d.Files {
		rj.Attachments = append(rj.Attachments, attachmentJSON{Name: a.Name, ContentType: a.ContentType, Inline: a.ContentID != ""})
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
		dj := deliveryJSON{Kind: dl.Kind, State: dl.State, Address: dl.Address,
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

// audienceJSON is what a run did with its recipients, as the run history shows it.
type audienceJSON struct {
	Recipients   int                  `json:"recipients"`
	Slices       int                  `json:"slices"`
	NotTriggered int                  `json:"notTriggered,omitempty"`
	Empty        int                  `json:"empty,omitempty"`
	Rows         int                  `json:"rows,omitempty"`
	Skips        []map[string]any     `json:"skips,omitempty"`
	SliceDetails []notify.SliceDetail `json:"sliceDetails,omitempty"`
}

func audienceOf(a *notify.Audience) *audienceJSON {
	if a == nil {
		return nil
	}
	out := &audienceJSON{Recipients: a.Recipients, Slices: a.Slices, NotTriggered: a.NotTriggered, Empty: a.Empty, Rows: a.Rows,
		SliceDetails: a.SliceDetails}
	for _, sk := range a.Skips {
		out.Skips = append(out.Skips, skipJSON(sk))
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
