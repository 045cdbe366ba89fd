package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"time"

	"github.com/heraldhq/herald/analytics/numfmt"
	"github.com/heraldhq/herald/engine/cron"
	"github.com/heraldhq/herald/store"
)

// Run stages, recorded with a failure so a person sees where it broke.
const (
	stageMembership = "membership"
	stageEvaluate   = "evaluate"
	stageRender     = "render"
	stageExport     = "export"
	stageHandover   = "handover"
)

// RunDetail is what a run records of itself (the run's detail JSON).
type RunDetail struct {
	Values     map[string]*float64 `json:"values,omitempty"`
	Condition  *bool               `json:"condition,omitempty"`
	Subject    string              `json:"subject,omitempty"`
	Text       string              `json:"text,omitempty"`
	Files      []store.Attachment  `json:"attachments,omitempty"`
	Stage      string              `json:"stage,omitempty"`
	Reason     string              `json:"reason,omitempty"`
	TimingsMS  map[string]int64    `json:"timingsMs,omitempty"`
	Recipients []string            `json:"channels,omitempty"`
}

// stageError is a run failure and the stage it happened in.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return fmt.Sprintf("%s: %v", e.stage, e.err) }
func (e *stageError) Unwrap() error { return e.err }

// claim claims the instants in one transaction and returns the runs it got.
func (e *Engine) claim(ctx context.Context, fires []Fire) []store.Run {
	runs := make([]store.Run, len(fires))
	now := e.now()
	for i, f := range fires {
		runs[i] = store.Run{ID: store.NewID(24), SubscriptionID: f.SubscriptionID, ScheduledAt: f.At,
			State: store.RunRunning, Started: now, Incarnation: e.incarnation}
	}
	claimed, err := e.st.ClaimRuns(ctx, runs)
	if err != nil {
		e.log.Error("claim runs", "runs", len(runs), "err", err)
		return nil
	}
	got := runs[:0]
	for i, ok := range claimed {
		if ok {
			got = append(got, runs[i])
		}
	}
	return got
}

// process does the work of a claimed run and returns its outcome to record.
func (e *Engine) process(ctx context.Context, run store.Run) store.Finish {
	runCtx, cancel := context.WithTimeout(ctx, e.cfg.RunTimeout)
	defer cancel()
	detail := RunDetail{TimingsMS: map[string]int64{}}
	log := e.log.With("subscription", run.SubscriptionID, "run", run.ID)
	state, err := e.st.State(ctx, run.SubscriptionID)
	if err != nil {
		log.Error("subscription state", "err", err)
	}
	deliveries, outcome, err := e.execute(runCtx, run, &detail, &state)
	run.State, run.Finished = outcome, e.now()
	if err != nil {
		var se *stageError
		if errors.As(err, &se) {
			detail.Stage = se.stage
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("timed out after %s in stage %s: %w", e.cfg.RunTimeout, detail.Stage, err)
		}
		run.Error = err.Error()
	}
	run.Detail, _ = json.Marshal(detail)
	notice, err := e.health(context.WithoutCancel(ctx), run, &state)
	if err != nil {
		log.Error("subscription health", "err", err)
	}
	if run.State == store.RunFailed {
		log.Warn("run failed", "instant", run.ScheduledAt, "stage", detail.Stage, "err", run.Error)
	} else {
		log.Debug("run done", "instant", run.ScheduledAt, "state", run.State, "deliveries", deliveryIDs(deliveries))
	}
	return store.Finish{Run: run, Deliveries: append(deliveries, notice...), State: &state}
}

// deliveryIDs lists the ids of ds; each begins with its run's id.
func deliveryIDs(ds []store.Delivery) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// finish records outcomes in one transaction, even when the service is
// stopping (the instants are claimed), and wakes the delivery relay.
func (e *Engine) finish(ctx context.Context, fins []store.Finish) {
	if err := e.st.FinishRuns(context.WithoutCancel(ctx), fins, e.now()); err != nil {
		e.log.Error("finish runs", "runs", len(fins), "err", err)
		return
	}
	for _, f := range fins {
		e.metrics.runs.WithLabelValues(f.Run.State).Inc()
	}
	for _, f := range fins {
		if len(f.Deliveries) > 0 {
			e.notify()
			return
		}
	}
}

// health counts failed runs in a row into st. The run that reaches
// FailuresBeforeNotice marks the subscription unhealthy and carries a notice
// to each of the owner's e-mail channels; a run that does not fail resets it.
func (e *Engine) health(ctx context.Context, run store.Run, st *store.SubscriptionState) ([]store.Delivery, error) {
	if run.State != store.RunFailed {
		st.Failures, st.Unhealthy = 0, false
		return nil, nil
	}
	st.Failures++
	if st.Failures < e.cfg.FailuresBeforeNotice || st.Unhealthy {
		return nil, nil
	}
	st.Unhealthy = true
	sub, err := e.st.SubscriptionByID(ctx, run.SubscriptionID)
	if err != nil {
		return nil, err
	}
	chans, err := e.st.Channels(ctx, sub.Owner)
	if err != nil {
		return nil, err
	}
	p := store.Payload{
		Subject: fmt.Sprintf("Herald: subscription %q is failing", sub.Title),
		Text: fmt.Sprintf("The subscription %q has failed %d times in a row and is marked unhealthy.\n\nLast failure (%s): %s\n",
			sub.Title, st.Failures, run.ScheduledAt.Format(time.RFC3339), run.Error),
	}
	var notice []store.Delivery
	for _, ch := range chans {
		if ch.Kind == store.KindEmail {
			notice = append(notice, store.Delivery{ID: store.NewID(24), ChannelID: ch.ID, Kind: ch.Kind, Payload: p})
		}
	}
	return notice, nil
}

// execute does the work of a claimed run and returns its deliveries and state.
func (e *Engine) execute(ctx context.Context, run store.Run, d *RunDetail, st *store.SubscriptionState) ([]store.Delivery, string, error) {
	sub, err := e.subscription(ctx, run.SubscriptionID)
	if err != nil {
		return nil, store.RunFailed, &stageError{stageMembership, err}
	}
	if reason, err := e.ownerCannot(ctx, sub); err != nil {
		return nil, store.RunFailed, &stageError{stageMembership, err}
	} else if reason != "" {
		d.Reason = reason
		return nil, store.RunSkipped, nil
	}

	start := time.Now()
	ev, err := e.evaluate(ctx, sub, run.ScheduledAt)
	d.TimingsMS[stageEvaluate] = time.Since(start).Milliseconds()
	d.Values = ev.detailValues()
	if err != nil {
		return nil, store.RunFailed, &stageError{stageEvaluate, err}
	}
	d.Condition = &ev.condition
	if !decide(sub, ev.condition, st) {
		return nil, store.RunNotTriggered, nil
	}

	start = time.Now()
	d.Subject, d.Text, err = render(sub, ev)
	d.TimingsMS[stageRender] = time.Since(start).Milliseconds()
	if err != nil {
		return nil, store.RunFailed, &stageError{stageRender, err}
	}

	start = time.Now()
	for _, a := range sub.Def.Attachments {
		for _, format := range a.Formats {
			file, err := e.executor().ExportReport(ctx, a.Report, format, filepath.Join(e.cfg.FilesDir, run.ID))
			if err != nil {
				return nil, store.RunFailed, &stageError{stageExport, fmt.Errorf("export %s as %s: %w", a.Report, format, err)}
			}
			if file.Path != "" { // a report without data has nothing to attach
				d.Files = append(d.Files, file)
			}
		}
	}
	d.TimingsMS[stageExport] = time.Since(start).Milliseconds()

	deliveries, err := e.deliveries(ctx, sub, store.Payload{Subject: d.Subject, Text: d.Text, Attachments: d.Files})
	if err != nil {
		return nil, store.RunFailed, &stageError{stageHandover, err}
	}
	for _, dl := range deliveries {
		d.Recipients = append(d.Recipients, dl.ChannelID)
	}
	if len(deliveries) == 0 {
		d.Reason = "every channel of the subscription was deleted"
		return nil, store.RunSkipped, nil
	}
	return deliveries, store.RunQueued, nil
}

// ownerCannot returns why the subscription's owner may no longer have it fire
// (not an enabled member, project deleted), or "".
func (e *Engine) ownerCannot(ctx context.Context, sub store.Subscription) (string, error) {
	return e.owners.get(ctx, [2]string{sub.ProjectID, sub.Owner}, func(ctx context.Context) (string, error) {
		return e.checkOwner(ctx, sub)
	})
}

func (e *Engine) checkOwner(ctx context.Context, sub store.Subscription) (string, error) {
	p, err := e.st.ProjectByID(ctx, sub.ProjectID)
	if err != nil {
		return "", err
	}
	if p.State == store.ProjectDeleted {
		return "the project is deleted", nil
	}
	m, err := e.st.Membership(ctx, sub.ProjectID, sub.Owner)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Status != store.MemberEnabled) {
		return "the owner is no longer an enabled member of the project", nil
	}
	return "", err
}

// evaluation is what a run computed: the metric values and the condition.
type evaluation struct {
	programs  *programs
	values    map[string]float64
	nulls     map[string]bool
	formats   map[string]string
	condition bool
}

func (ev evaluation) detailValues() map[string]*float64 {
	if len(ev.values)+len(ev.nulls) == 0 {
		return nil
	}
	out := make(map[string]*float64, len(ev.values))
	for k, v := range ev.values {
		out[k] = &v
	}
	for k := range ev.nulls {
		out[k] = nil
	}
	return out
}

// evaluate runs every metric the subscription names (once per metric and
// instant, however many subscriptions ask) and its condition.
func (e *Engine) evaluate(ctx context.Context, sub store.Subscription, at time.Time) (evaluation, error) {
	ev := evaluation{values: map[string]float64{}, nulls: map[string]bool{}, formats: map[string]string{}}
	p, err := e.programs.get(sub.Def)
	if err != nil {
		return ev, err
	}
	ev.programs = p
	for _, uri := range p.metrics {
		v, err := e.memo.do(ctx, uri, at, func(ctx context.Context) (Value, error) { return e.executor().ExecuteMetric(ctx, uri) })
		if err != nil {
			return ev, fmt.Errorf("execute %s: %w", uri, err)
		}
		ev.formats[uri] = v.Format
		if v.Null {
			ev.nulls[uri] = true
		} else {
			ev.values[uri] = v.Number
		}
	}
	for _, uri := range p.cond.Metrics() {
		if ev.nulls[uri] {
			return ev, nil // a condition over a metric without a value does not hold
		}
	}
	ev.condition, err = p.cond.EvalBool(ev.values)
	if err != nil {
		return ev, fmt.Errorf("condition: %w", err)
	}
	return ev, nil
}

// decide applies the fire mode and records the condition in st: always
// sends when the condition holds; onChange only when it turned from false
// (or never evaluated) to true.
func decide(sub store.Subscription, cond bool, st *store.SubscriptionState) bool {
	send := cond
	if sub.Def.FireMode == store.FireOnChange && st.LastCondition != nil && *st.LastCondition {
		send = false
	}
	st.LastCondition = &cond
	return send
}

// render fills the subject and message templates with the values the
// condition saw, each metric in its number format.
func render(sub store.Subscription, ev evaluation) (subject, text string, err error) {
	format := func(uri string, v float64) string {
		if ev.nulls[uri] {
			return "(no value)"
		}
		return numfmt.Format(v, ev.formats[uri])
	}
	values := maps.Clone(ev.values)
	for uri := range ev.nulls {
		values[uri] = math.NaN()
	}
	if text, err = ev.programs.message.Render(values, format); err != nil {
		return "", "", fmt.Errorf("message: %w", err)
	}
	subject = sub.Title
	if ev.programs.subject != nil {
		if subject, err = ev.programs.subject.Render(values, format); err != nil {
			return "", "", fmt.Errorf("subject: %w", err)
		}
	}
	return subject, text, nil
}

// deliveries makes one delivery per channel of the subscription that still exists.
func (e *Engine) deliveries(ctx context.Context, sub store.Subscription, p store.Payload) ([]store.Delivery, error) {
	var out []store.Delivery
	for _, cid := range sub.Channels {
		ch, err := e.channels.get(ctx, cid, func(ctx context.Context) (store.Channel, error) { return e.st.ChannelByID(ctx, cid) })
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, store.Delivery{ID: store.NewID(24), ChannelID: ch.ID, Kind: ch.Kind, Payload: p})
	}
	return out, nil
}

func (e *Engine) parseTrigger(t store.Trigger) (*cron.Schedule, *time.Location, bool) {
	s, err := cron.Parse(t.Cron)
	if err != nil {
		return nil, nil, false
	}
	return s, e.sched.location(t.Timezone), true
}
