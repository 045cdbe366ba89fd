package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// A subscription with recipients or a burst goes to many people, each as
// themselves: a member with their own user filters, a burst's address with
// the owner's narrowed to its rows' elements. The run groups them by the
// slice of the data they see; each slice is evaluated once (one execution per
// metric), its condition decides for its recipients, and its message and
// reports are rendered once (one render per report and format), then handed
// over as one delivery per recipient and way to reach them.

// maxSkips and maxSliceDetails bound what a run records of them one by one.
const (
	maxSkips        = 20
	maxSliceDetails = 100
)

// stageSlices names, in a run's timings, the evaluation and rendering of its
// slices.
const stageSlices = "slices"

// sliceWorkers is how many slices of one run are evaluated and rendered at
// once; the executions themselves wait for the project's places
// (execution.perProject).
const sliceWorkers = 16

// target is one recipient of a run: who it runs as, and where it goes.
type target struct {
	as     Principal
	member string // a member's user id; "" for the owner and a burst's address
	dests  []dest
}

// dest is one delivery of a target: through a channel of the owner's (nil for
// e-mail, which needs none) to an address of its own, or to the channel's
// own address (config nil).
type dest struct {
	channel *store.Channel
	kind    string
	config  json.RawMessage
	address string
}

// audience collects what a run did with its recipients, as their targets
// are listed and then handed over, one after the other: the slices rendered
// at once never touch it.
type audience struct {
	notify.Audience
	skipped int
}

func (a *audience) skip(s notify.Skip) {
	a.skipped++
	if len(a.Skips) < maxSkips {
		a.Skips = append(a.Skips, s)
	}
}

// fanOut does the work of a claimed run of a subscription with recipients or
// a burst, as execute does for one without, its owner being as.
func (e *Engine) fanOut(ctx context.Context, run store.Run, sub store.Subscription, progs *programs, as Principal,
	d *RunDetail, st *store.SubscriptionState) ([]store.Delivery, string, error) {
	aud := &audience{}
	start := time.Now()
	targets, err := e.targets(ctx, run, sub, progs, as, aud)
	d.TimingsMS[stageRecipients] = time.Since(start).Milliseconds()
	if err != nil {
		return nil, store.RunFailed, &stageError{stageRecipients, err}
	}
	groups := groupBySlice(targets)
	start = time.Now()
	outcomes := e.renderSlices(ctx, run, sub, progs, groups, d.Trigger == notify.TriggerManual)
	d.TimingsMS[stageSlices] = time.Since(start).Milliseconds()
	start = time.Now()
	defer func() { d.TimingsMS[stageHandover] = time.Since(start).Milliseconds() }()
	return e.handOver(ctx, run, sub, groups, outcomes, aud, d, st)
}

// targets lists the run's recipients: the owner on their own channels, and
// the members or the burst's addresses.
func (e *Engine) targets(ctx context.Context, run store.Run, sub store.Subscription, progs *programs, as Principal,
	aud *audience) ([]*target, error) {
	var out []*target
	if own, err := e.ownerTarget(ctx, sub, as); err != nil {
		return nil, err
	} else if own != nil {
		out = append(out, own)
	}
	others, err := e.audienceTargets(ctx, sub, progs, as, run.ScheduledAt, aud)
	if err != nil {
		return nil, err
	}
	return append(out, others...), nil
}

// audienceTargets lists the recipients sub goes to at an instant beyond its
// owner's channels: its members, or its burst's addresses (read as the owner, as).
func (e *Engine) audienceTargets(ctx context.Context, sub store.Subscription, progs *programs, as Principal, at time.Time,
	aud *audience) ([]*target, error) {
	switch {
	case sub.Def.Recipients != nil:
		return e.memberTargets(ctx, sub, progs, at, aud)
	case sub.Def.Burst != nil:
		return e.burstTargets(ctx, sub, as, aud)
	}
	return nil, nil
}

// ownerTarget is the owner on those of the subscription's own channels that
// exist and are not paused; nil when there are none.
func (e *Engine) ownerTarget(ctx context.Context, sub store.Subscription, as Principal) (*target, error) {
	t := &target{as: as}
	for _, cid := range sub.Channels {
		if _, paused := sub.Paused[cid]; paused {
			continue
		}
		ch, err := e.channel(ctx, cid)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		t.dests = append(t.dests, dest{channel: &ch, kind: ch.Kind})
	}
	if len(t.dests) == 0 {
		return nil, nil
	}
	return t, nil
}

// channel returns a channel, read at most a second ago.
func (e *Engine) channel(ctx context.Context, id string) (store.Channel, error) {
	return e.channels.get(ctx, id, func(ctx context.Context) (store.Channel, error) { return e.st.ChannelByID(ctx, id) })
}

// via returns the channel a way to reach recipients goes through; nil for a
// kind alone.
func (e *Engine) via(ctx context.Context, v store.Via) (*store.Channel, error) {
	if v.Channel == "" {
		return nil, nil
	}
	ch, err := e.channel(ctx, v.Channel)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("the %s channel %s the recipients are reached through was deleted", v.Kind, v.Channel)
	}
	if err == nil && ch.Kind != v.Kind {
		return nil, fmt.Errorf("the channel %s the recipients are reached through is no longer of kind %s", v.Channel, v.Kind)
	}
	return &ch, err
}

// memberTargets lists the members the subscription goes to now, each as
// themselves, who may have it run: an enabled member whose roles execute
// (and export) what it needs and who reads every object it names, the
// decision authorize takes for the owner. The others, and those with no
// address for a way, are skipped. The members, their standings and their
// user filters are read at once, however many there are.
func (e *Engine) memberTargets(ctx context.Context, sub store.Subscription, progs *programs, at time.Time, aud *audience) ([]*target, error) {
	members, gone, err := e.domain.Audience(ctx, sub)
	if err != nil {
		return nil, err
	}
	for _, id := range gone {
		aud.skip(notify.Skip{Recipient: id, Reason: "not an enabled member of the project"})
	}
	vias := make([]*store.Channel, len(sub.Def.Recipients.Via))
	for i, v := range sub.Def.Recipients.Via {
		if vias[i], err = e.via(ctx, v); err != nil {
			return nil, err
		}
	}
	filters, err := e.analytics.ProjectFilters(ctx, sub.ProjectID)
	if err != nil {
		return nil, err
	}
	needs := notify.FireNeeds(sub, progs.metrics)
	var out []*target
	for _, m := range members {
		r, err := e.decide(ctx, sub.ProjectID, m.Standing, needs, at)
		if err != nil {
			return nil, err
		}
		if r != nil {
			aud.skip(notify.Skip{Recipient: m.ID, Reason: r.Reason("recipient")})
			continue
		}
		t := &target{as: Principal{User: m.ID, Project: sub.ProjectID, Filters: filters[m.ID]}, member: m.ID}
		for i, v := range sub.Def.Recipients.Via {
			address := m.Login
			if v.Kind != notify.ViaEmail {
				address = m.Phone
			}
			if address == "" {
				aud.skip(notify.Skip{Recipient: m.ID, Reason: "has no phone number for " + v.Kind})
				continue
			}
			config, err := e.domain.Readdress(v, vias[i], address)
			if err != nil {
				aud.skip(notify.Skip{Recipient: m.ID, Address: address, Reason: err.Error()})
				continue
			}
			t.dests = append(t.dests, dest{channel: vias[i], kind: v.Kind, config: config, address: address})
		}
		if len(t.dests) > 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

// groupBySlice groups the targets by the slice of the data they see, in the
// order their first target came.
func groupBySlice(targets []*target) []*slice {
	var out []*slice
	at := map[Filters]*slice{}
	for _, t := range targets {
		s := at[t.as.Filters]
		if s == nil {
			s = &slice{as: t.as}
			at[t.as.Filters] = s
			out = append(out, s)
		}
		s.targets = append(s.targets, t)
	}
	return out
}

// slice is the recipients of a run who see one slice of the data, as whom
// it is evaluated and rendered.
type slice struct {
	as      Principal
	targets []*target
}

// rendered is what a slice sends: its evaluation, and when its condition
// holds (or the run was sent now) its message, its files and the HTML part
// in a file of the run store.
type rendered struct {
	ev       evaluation
	send     bool
	msg      message
	files    []store.Attachment
	htmlFile string
	empty    bool // it attaches reports, and every one of them had no rows
	stage    string
	err      error
}

// renderSlices evaluates and renders each slice, sliceWorkers at once.
func (e *Engine) renderSlices(ctx context.Context, run store.Run, sub store.Subscription, progs *programs, list []*slice,
	manual bool) []rendered {
	out := make([]rendered, len(list))
	sem := make(chan struct{}, sliceWorkers)
	var wg sync.WaitGroup
	for i, s := range list {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = e.renderSlice(ctx, run, sub, progs, s.as, manual)
		})
	}
	wg.Wait()
	return out
}

// renderSlice evaluates the subscription as p and, when it sends, renders
// its message and attachments. A subscription with recipients reads no
// previous values (f:previous), which are the subscription's, not a slice's.
func (e *Engine) renderSlice(ctx context.Context, run store.Run, sub store.Subscription, progs *programs, p Principal, manual bool) rendered {
	var r rendered
	if r.ev, r.err = e.evaluate(ctx, p, progs, run.ScheduledAt, nil); r.err != nil {
		r.stage = stageEvaluate
		return r
	}
	if r.send = r.ev.condition || manual; !r.send {
		return r
	}
	if r.msg, r.err = renderMessage(sub, r.ev, false); r.err != nil {
		r.stage = stageRender
		return r
	}
	files, reports, _, err := e.attachAll(ctx, p, sub.Def.Attachments, run.ScheduledAt,
		func(store.ReportAttachment) attachOpts { return attachOpts{} })
	if err != nil {
		var se *stageError
		errors.As(err, &se)
		r.stage, r.err = se.stage, se.err
		return r
	}
	r.files = files
	r.empty = len(sub.Def.Attachments) > 0 && len(r.files) == 0
	if html := body(r.msg, reports); html != "" {
		if r.htmlFile, r.err = e.runFiles.write(func(w io.Writer) error {
			_, err := io.WriteString(w, html)
			return err
		}); r.err != nil {
			r.stage = stageRender
		}
	}
	return r
}

// handOver makes the deliveries of the slices that send and records what
// the run did with its recipients.
func (e *Engine) handOver(ctx context.Context, run store.Run, sub store.Subscription, list []*slice, outcomes []rendered,
	aud *audience, d *RunDetail, st *store.SubscriptionState) ([]store.Delivery, string, error) {
	aud.Slices = len(list)
	files, at := runFiles(outcomes)
	d.Files = files
	var deliveries []store.Delivery
	var firstErr *stageError
	failed, empty, held := 0, 0, false
	skipEmpty := sub.Def.OnEmpty != "" && sub.Def.OnEmpty != store.OnEmptySend
	for i, s := range list {
		o := outcomes[i]
		if len(aud.SliceDetails) < maxSliceDetails {
			aud.SliceDetails = append(aud.SliceDetails, sliceDetail(s, o))
		}
		if o.err != nil {
			failed++
			if firstErr == nil {
				firstErr = &stageError{o.stage, o.err}
			}
			for _, t := range s.targets {
				aud.skip(notify.Skip{Recipient: t.member, Address: firstAddress(t), Reason: o.stage + ": " + o.err.Error()})
			}
			continue
		}
		held = held || o.ev.condition
		if !o.send {
			aud.NotTriggered += len(s.targets)
			continue
		}
		if o.empty && skipEmpty {
			aud.Empty += len(s.targets)
			empty++
			continue
		}
		if d.Subject == "" {
			d.Subject, d.Text = o.msg.subject, o.msg.text
		}
		p := store.Payload{Subject: o.msg.subject, Text: o.msg.text, HTMLFile: o.htmlFile, Attachments: o.files,
			Source: channels.Source{Subscription: notify.SubscriptionURI(sub), SubscriptionTitle: sub.Title, Run: run.ID,
				Instant: run.ScheduledAt, Manual: d.Trigger == notify.TriggerManual, Values: o.ev.detailValues()}}
		for _, t := range s.targets {
			if t.member != "" || firstAddress(t) != "" { // not the owner on their own channels
				aud.Recipients++
			}
			deliveries = e.targetDeliveries(deliveries, sub, run.ID, t, p, at[i])
		}
	}
	d.Condition = &held
	if len(list) == 1 && outcomes[0].err == nil {
		d.Values = outcomes[0].ev.detailValues()
	}
	decide(sub, held, st)
	d.Audience, d.Skipped = &aud.Audience, aud.skipped
	if empty > 0 {
		var err error
		if deliveries, err = e.emptyNotice(ctx, run, sub, deliveries, d); err != nil {
			return nil, store.RunFailed, &stageError{stageHandover, err}
		}
	}
	switch {
	case len(deliveries) > 0:
		return deliveries, store.RunQueued, nil
	case failed > 0 && failed == len(list):
		return nil, store.RunFailed, firstErr
	case aud.Recipients == 0 && aud.NotTriggered > 0 && failed == 0 && empty == 0:
		return nil, store.RunNotTriggered, nil
	case empty > 0 && failed == 0:
		return nil, store.RunSkipped, nil
	}
	d.Reason = "no recipient to send to"
	if aud.skipped > 0 {
		d.Reason = fmt.Sprintf("every recipient was skipped (%d)", aud.skipped)
	}
	return nil, store.RunSkipped, nil
}

// emptyNotice notes in d that slices' reports were empty and, under onEmpty
// notifyOwner, adds the notice to the owner to the run's deliveries, unless
// the owner's own address is sent the message.
func (e *Engine) emptyNotice(ctx context.Context, run store.Run, sub store.Subscription, ds []store.Delivery,
	d *RunDetail) ([]store.Delivery, error) {
	d.Reason = "empty report"
	if sub.Def.OnEmpty != store.OnEmptyNotifyOwner {
		return ds, nil
	}
	n, err := e.domain.EmptyNotice(ctx, sub, run)
	if err != nil {
		return nil, fmt.Errorf("notice to the owner: %w", err)
	}
	if slices.ContainsFunc(ds, func(d store.Delivery) bool { return d.ChannelID == n.ChannelID && d.Address == "" }) {
		return ds, nil
	}
	d.Reason += "; the owner was told"
	return append(ds, n), nil
}

// runFiles lists the distinct files of the slices, and where each slice's
// files are among them.
func runFiles(outcomes []rendered) ([]store.Attachment, [][]int) {
	var files []store.Attachment
	index := map[store.Attachment]int{}
	at := make([][]int, len(outcomes))
	for i, o := range outcomes {
		for _, f := range o.files {
			n, ok := index[f]
			if !ok {
				n = len(files)
				index[f] = n
				files = append(files, f)
			}
			at[i] = append(at[i], n)
		}
	}
	return files, at
}

// targetDeliveries appends to out a target's deliveries of a slice's
// payload p, each with its own links: a channel's own, or a recipient's
// (downloads only), at being where p's files are among the run's.
func (e *Engine) targetDeliveries(out []store.Delivery, sub store.Subscription, runID string, t *target, p store.Payload, at []int) []store.Delivery {
	for _, ds := range t.dests {
		dl := store.Delivery{ID: store.NewSortableID(), Kind: ds.kind, Recipient: t.member, Address: ds.address,
			Config: ds.config, Payload: p}
		if ds.channel != nil {
			dl.ChannelID = ds.channel.ID
		}
		if ds.config == nil {
			dl.Payload.Links = e.domain.LinksAt(sub, runID, dl.ChannelID, p.Attachments, at)
		} else {
			dl.Payload.Links = e.domain.RecipientLinks(runID, p.Attachments, at)
		}
		out = append(out, dl)
	}
	return out
}

// sliceDetail is what a run records of a slice.
func sliceDetail(s *slice, o rendered) notify.SliceDetail {
	sd := notify.SliceDetail{Filters: s.as.Filters.Conditions(), Recipients: len(s.targets), Subject: o.msg.subject}
	if o.err != nil {
		sd.Error = o.stage + ": " + o.err.Error()
		return sd
	}
	cond := o.ev.condition
	sd.Condition, sd.Values = &cond, o.ev.detailValues()
	return sd
}

// addresses lists where a target's deliveries go, one per delivery ("" for
// a channel's own address).
func (t *target) addresses() []string {
	var out []string
	for _, d := range t.dests {
		out = append(out, d.address)
	}
	return out
}

// firstAddress is the address of a target's first delivery, for the run's record.
func firstAddress(t *target) string {
	for _, d := range t.dests {
		if d.address != "" {
			return d.address
		}
	}
	return ""
}
