package engine

import (
	"cmp"
	"context"
	"errors"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Preview is what a subscription would send if it fired now.
type Preview struct {
	Values      map[string]*float64
	Condition   bool
	WouldSend   bool // the condition holds (and, for onChange, it turned true)
	Resolved    bool // what would go is the resolved message: the condition turned false
	Subject     string
	Text        string
	HTML        string // the message as the HTML part shows it, before the reports
	Attachments []store.ReportAttachment
	Channels    []store.Channel // the channels it would send to
}

// Preview evaluates the subscription's condition and renders its message
// now, as its owner, without claiming an instant, exporting or sending
// anything. A subscription its owner may not have run gives the refusal
// (a *notify.Refusal) or why it is skipped.
func (e *Engine) Preview(ctx context.Context, sub store.Subscription) (Preview, error) {
	now := e.now()
	progs, err := e.programs.get(sub.Def)
	if err != nil {
		return Preview{}, err
	}
	switch d, err := e.authorize(ctx, sub, progs, now); {
	case err != nil:
		return Preview{}, err
	case d.skip != "":
		return Preview{}, errors.New(d.skip)
	case d.refusal != nil:
		return Preview{}, d.refusal
	}
	st, err := e.st.State(ctx, sub.ID)
	if err != nil {
		return Preview{}, err
	}
	ev, err := e.evaluate(ctx, ownerOf(sub), sub, now, st.LastValues)
	p := Preview{Values: ev.detailValues(), Condition: ev.condition, Attachments: sub.Def.Attachments}
	if err != nil {
		return p, err
	}
	send, resolved := decide(sub, ev.condition, &st)
	p.WouldSend, p.Resolved = send, resolved
	m, err := renderMessage(sub, ev, resolved)
	if err != nil {
		return p, err
	}
	p.Subject, p.Text, p.HTML = m.subject, m.text, cmp.Or(m.html, channels.TextHTML(m.text))
	for _, id := range sub.Channels {
		ch, err := e.st.ChannelByID(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return p, err
		}
		p.Channels = append(p.Channels, ch)
	}
	return p, nil
}
