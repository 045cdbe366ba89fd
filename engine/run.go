package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/heraldhq/herald/analytics/numfmt"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// Run stages, recorded with a failure so a person sees where it broke. A
// fire the access decision refused fails in notify.StageAuthorize.
const (
	stageMembership = "membership"
	stageEvaluate   = "evaluate"
	stageRender     = "render"
	stageExport     = "export"
	stageHandover   = "handover"
	stageRecipients = "recipients"
)

// RunDetail is what a run records of itself.
type RunDetail = notify.RunDetail

// stageError is a run failure and the stage it happened in.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return fmt.Sprintf("%s: %v", e.stage, e.err) }
func (e *stageError) Unwrap() error { return e.err }

// catchUpDetail is the detail a catch-up run is claimed with.
var catchUpDetail, _ = json.Marshal(RunDetail{Trigger: notify.TriggerCatchUp})

// claim claims the instants in one transaction and returns the runs it got.
func (e *Engine) claim(ctx context.Context, fires []Fire) []store.Run {
	runs := make([]store.Run, len(fires))
	now := e.now()
	for i, f := range fires {
		runs[i] = store.Run{ID: store.NewSortableID(), SubscriptionID: f.SubscriptionID, ScheduledAt: f.At,
			State: store.RunRunning, Started: now, Incarnation: e.incarnation}
		if f.CatchUp {
			runs[i].Detail = catchUpDetail
		}
	}
	var claimed []bool
	err := e.untilStored(ctx, "claim runs", len(runs), func(ctx context.Context) (err error) {
		claimed, err = e.st.ClaimRuns(ctx, runs)
		return err
	})
	if err != nil { // stopping: the fires are caught up at the next start
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

// processAll processes claimed runs in order and hands each outcome to done.
// It reads the states of their subscriptions in one query, and a run sees the
// condition an earlier run of the batch left in its subscription's state.
// Once ctx ends, the runs not yet started are left claimed for the next
// start; a run under way finishes.
func (e *Engine) processAll(ctx context.Context, runs []store.Run, done func(store.Finish)) {
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.SubscriptionID
	}
	states, err := e.st.States(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("subscription states", "runs", len(runs), "err", err)
		}
		states = map[string]store.SubscriptionState{} // the runs go on from the zero state, as a first run does
	}
	for _, run := range runs {
		if ctx.Err() != nil {
			return
		}
		e.metrics.behind.Set(max(e.now().Sub(run.ScheduledAt), 0).Seconds())
		f := e.process(context.WithoutCancel(ctx), run, states[run.SubscriptionID])
		if f.State != nil {
			states[run.SubscriptionID] = *f.State
		}
		done(f)
	}
}

// process does the work of a claimed run, its subscription being in state,
// and returns its outcome to record.
func (e *Engine) process(ctx context.Context, run store.Run, state store.SubscriptionState) store.Finish {
	runCtx, cancel := context.WithTimeout(ctx, e.cfg.RunTimeout)
	defer cancel()
	detail := notify.Detail(run)
	detail.TimingsMS = map[string]int64{}
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
	// The attributes are given at each call, not bound to a logger for the run:
	// binding formats them at once, and a burst's runs are mostly not logged.
	if run.State == store.RunFailed {
		e.log.Warn("run failed", "subscription", run.SubscriptionID, "run", run.ID, "instant", run.ScheduledAt,
			"stage", detail.Stage, "err", run.Error)
	} else if e.log.Enabled(ctx, slog.LevelDebug) {
		e.log.Debug("run done", "subscription", run.SubscriptionID, "run", run.ID, "instant", run.ScheduledAt,
			"state", run.State, "deliveries", deliveryIDs(deliveries))
	}
	fin := store.Finish{Run: run, Deliveries: deliveries}
	if detail.Trigger != notify.TriggerManual {
		fin.State = &state // a manual run leaves the condition the schedule saw
	}
	return fin
}

// deliveryIDs lists the ids of ds.
func deliveryIDs(ds []store.Delivery) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// finish records outcomes in one transaction, and wakes the delivery relay.
// A store that cannot take them (a full disk) is tried again until it can;
// once the engine stops, the runs are left claimed, running, and the next
// start takes them over.
func (e *Engine) finish(ctx context.Context, fins []store.Finish) {
	err := e.untilStored(ctx, "finish runs", len(fins), func(ctx context.Context) error {
		return e.st.FinishRuns(context.WithoutCancel(ctx), fins, e.now())
	})
	if err != nil {
		return
	}
	for _, f := range fins {
		e.metrics.runs.WithLabelValues(f.Run.State).Inc()
	}
	e.domain.WakeHealth()
	for _, f := range fins {
		if len(f.Deliveries) > 0 {
			e.handedOver()
			return
		}
	}
}

// execute does the work of a claimed run and returns its deliveries and state.
func (e *Engine) execute(ctx context.Context, run store.Run, d *RunDetail, st *store.SubscriptionState) ([]store.Delivery, string, error) {
	sub, err := e.subscription(ctx, run.SubscriptionID)
	if err != nil {
		return nil, store.RunFailed, &stageError{stageMembership, err}
	}
	p, err := e.programs.get(sub.Def)
	if err != nil {
		return nil, store.RunFailed, &stageError{stageEvaluate, err}
	}
	dec, err := e.authorize(ctx, sub, p, run.ScheduledAt)
	switch {
	case err != nil:
		return nil, store.RunFailed, &stageError{stageMembership, err}
	case dec.skip != "":
		d.Reason = dec.skip
		return nil, store.RunSkipped, nil
	case dec.refusal != nil:
		e.metrics.refused.WithLabelValues(dec.refusal.Code).Inc()
		return nil, store.RunFailed, &stageError{notify.StageAuthorize, dec.refusal}
	}
	if sub.Def.Recipients != nil || sub.Def.Burst != nil {
		return e.fanOut(ctx, run, sub, p, dec.as, d, st)
	}
	owner := dec.as

	start := time.Now()
	ev, err := e.evaluate(ctx, owner, p, run.ScheduledAt, st.LastValues)
	d.TimingsMS[stageEvaluate] = time.Since(start).Milliseconds()
	d.Values = ev.detailValues()
	if err != nil {
		return nil, store.RunFailed, &stageError{stageEvaluate, err}
	}
	d.Condition = &ev.condition
	st.LastValues = ev.previousValues()
	send, resolved := decide(sub, ev.condition, st)
	if d.Trigger == notify.TriggerManual {
		send, resolved = true, false // sent now by a person, whatever the condition says
	}
	if !send {
		return nil, store.RunNotTriggered, nil
	}
	d.Resolved = resolved

	start = time.Now()
	var msg message
	msg, err = renderMessage(sub, ev, resolved)
	d.Subject, d.Text = msg.subject, msg.text
	d.TimingsMS[stageRender] = time.Since(start).Milliseconds()
	if err != nil {
		return nil, store.RunFailed, &stageError{stageRender, err}
	}

	start = time.Now()
	attachments := sub.Def.Attachments
	if resolved {
		attachments = nil // the all-clear carries no reports
	}
	chk, err := e.newChecks(ctx, sub, attachments)
	if err != nil {
		return nil, store.RunFailed, &stageError{stageHandover, err}
	}
	if err := e.exportGroups(ctx, owner, run.ScheduledAt, msg, attachments, chk, d); err != nil {
		return nil, store.RunFailed, err
	}
	d.TimingsMS[stageExport] = time.Since(start).Milliseconds()

	payload := store.Payload{Subject: d.Subject, Text: d.Text, HTML: chk.groups[0].html, Attachments: d.Files,
		Source: channels.Source{Subscription: notify.SubscriptionURI(sub), SubscriptionTitle: sub.Title, Run: run.ID,
			Instant: run.ScheduledAt, Manual: d.Trigger == notify.TriggerManual, Resolved: resolved, Values: d.Values,
			Previous: ev.previousRead()}}
	deliveries, err := e.deliveries(ctx, sub, run.ID, payload, d, chk.shape)
	var why string
	if err == nil {
		deliveries, why, err = chk.finish(ctx, e, run, deliveries)
	}
	if err != nil {
		return nil, store.RunFailed, &stageError{stageHandover, err}
	}
	for _, dl := range deliveries {
		d.Recipients = append(d.Recipients, dl.ChannelID)
	}
	if len(deliveries) == 0 {
		d.Reason = "every channel of the subscription was deleted"
		if len(d.Paused) > 0 {
			d.Reason = "every channel of the subscription is paused or deleted"
		}
		d.Reason = cmp.Or(why, d.Reason)
		return nil, store.RunSkipped, nil
	}
	d.Reason = why // why some channels were sent nothing, or the owner a notice instead
	return deliveries, store.RunQueued, nil
}

// evaluation is what a run computed: the metric values and the condition.
type evaluation struct {
	programs  *programs
	values    map[string]float64
	nulls     map[string]bool
	formats   map[string]string
	prev      map[string]*float64 // the values f:previous reads; nil at the first run
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

// evaluate runs every metric of a subscription's compiled programs progs
// (once per metric and instant, however many subscriptions ask), as
// principal p, and its condition; prev are the values its last evaluated run
// saw (f:previous).
func (e *Engine) evaluate(ctx context.Context, p Principal, progs *programs, at time.Time, prev map[string]*float64) (evaluation, error) {
	ev := evaluation{programs: progs, values: map[string]float64{}, nulls: map[string]bool{}, formats: map[string]string{}}
	for _, uri := range progs.metrics {
		v, err := e.memo.do(ctx, sliceKey{uri, p.Filters}, at, e.executeMetric(p, uri))
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
	for _, uri := range progs.cond.Metrics() {
		if ev.nulls[uri] {
			return ev, nil // a condition over a metric without a value does not hold
		}
	}
	ev.prev = prev
	var err error
	ev.condition, err = progs.cond.EvalBool(ev.inputs())
	if errors.Is(err, jexl.ErrNoPrevious) {
		return ev, nil // nor does one that needs a previous value there is none of
	}
	if err != nil {
		return ev, fmt.Errorf("condition: %w", err)
	}
	return ev, nil
}

// decide applies the fire mode and records the condition in st: always
// sends when the condition holds; onChange only when it turned from false
// (or never evaluated) to true, and, when the subscription has a resolved
// message, that message when it turned from true back to false.
func decide(sub store.Subscription, cond bool, st *store.SubscriptionState) (send, resolved bool) {
	was := st.LastCondition != nil && *st.LastCondition
	st.LastCondition = &cond
	if sub.Def.FireMode != store.FireOnChange {
		return cond, false
	}
	switch {
	case cond && !was:
		return true, false
	case !cond && was && sub.Def.Resolved != "":
		return true, true
	}
	return false, false
}

// message is a run's rendered message.
type message struct {
	subject, text string
	html          string // the HTML template's output; "" without one
}

// renderMessage fills the subject and message templates (the resolved message's, for
// the all-clear) with the values the condition saw, each metric in its number
// format, and the HTML template, when the subscription has one.
func renderMessage(sub store.Subscription, ev evaluation, resolved bool) (m message, err error) {
	format := func(uri string, v float64) string {
		if math.IsNaN(v) { // a metric without a value
			return jexl.NoValue
		}
		return numfmt.Format(v, ev.formats[uri])
	}
	values := ev.inputs()
	for uri := range ev.nulls {
		values[uri] = math.NaN()
	}
	text := ev.programs.message
	if resolved {
		text = ev.programs.resolved
	}
	if m.text, err = text.Render(values, format); err != nil {
		return m, fmt.Errorf("message: %w", err)
	}
	if ev.programs.html != nil && !resolved {
		if m.html, err = ev.programs.html.RenderHTML(values, format); err != nil {
			return m, fmt.Errorf("HTML message: %w", err)
		}
	}
	m.subject = sub.Title
	if ev.programs.subject != nil {
		if m.subject, err = ev.programs.subject.Render(values, format); err != nil {
			return m, fmt.Errorf("subject: %w", err)
		}
	}
	if resolved {
		m.subject = "Resolved: " + m.subject
	}
	return m, nil
}

// deliveries makes one delivery per channel of the subscription that still
// exists and is not paused (noted in d), each with its own links, and as
// shape makes it: shape may change the payload of a channel, and leave the
// channel out.
func (e *Engine) deliveries(ctx context.Context, sub store.Subscription, runID string, p store.Payload, d *RunDetail,
	shape func(cid string, p *store.Payload) (*store.Marks, bool)) ([]store.Delivery, error) {
	var out []store.Delivery
	for _, cid := range sub.Channels {
		if _, paused := sub.Paused[cid]; paused {
			d.Paused = append(d.Paused, cid)
			continue
		}
		ch, err := e.channels.get(ctx, cid, func(ctx context.Context) (store.Channel, error) { return e.st.ChannelByID(ctx, cid) })
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		p := p
		p.Links = e.domain.Links(sub, runID, ch.ID, p.Attachments)
		marks, send := shape(ch.ID, &p)
		if !send {
			continue
		}
		out = append(out, store.Delivery{ID: store.NewSortableID(), ChannelID: ch.ID, Kind: ch.Kind, Payload: p, Marks: marks})
	}
	return out, nil
}

// SendNow claims a run of sub at the current second, marked as sent now by
// by, and hands it to the workers: it goes through the same pipeline as a
// scheduled fire. A run of sub at the same second gives store.ErrConflict.
func (e *Engine) SendNow(ctx context.Context, sub store.Subscription, by string) (store.Run, error) {
	e.sending.RLock()
	defer e.sending.RUnlock()
	if !e.pipelineUp {
		return store.Run{}, errors.New("the engine is not running")
	}
	now := e.now()
	detail, _ := json.Marshal(RunDetail{Trigger: notify.TriggerManual, By: by})
	run := store.Run{ID: store.NewSortableID(), SubscriptionID: sub.ID, ScheduledAt: now.Truncate(time.Second),
		State: store.RunRunning, Started: now, Incarnation: e.incarnation, Detail: detail}
	if err := e.st.ClaimRun(ctx, run); err != nil {
		return store.Run{}, err
	}
	e.log.Info("subscription sent now", "subscription", sub.ID, "run", run.ID, "by", by)
	select {
	case e.claimed <- run:
	case <-ctx.Done(): // claimed: the adoption of runs left running takes it over
	}
	return run, nil
}

// Pauses between the tries of a write the store refused.
const (
	storeRetryFirst = 100 * time.Millisecond
	storeRetryMax   = 5 * time.Second
)

// untilStored runs write until the store takes it or ctx ends, pausing on the
// engine's clock between tries, from storeRetryFirst doubling to
// storeRetryMax: a store that cannot write for a while (a full disk) holds
// the runs rather than losing them. It logs the first failure and the
// recovery, and returns ctx's error when ctx ends first.
func (e *Engine) untilStored(ctx context.Context, what string, n int, write func(context.Context) error) error {
	wait := storeRetryFirst
	for try := 1; ; try++ {
		err := write(ctx)
		if err == nil {
			if try > 1 {
				e.log.Info(what+": the store takes writes again", "runs", n, "tries", try)
			}
			return nil
		}
		if try == 1 {
			e.log.Error(what+"; trying again until the store takes it", "runs", n, "err", err)
		}
		select {
		case <-ctx.Done():
			e.log.Error(what+": stopped before the store took it", "runs", n, "err", err)
			return ctx.Err()
		case <-e.cfg.Clock.After(wait):
		}
		wait = min(2*wait, storeRetryMax)
	}
}
