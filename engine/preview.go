package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/notify"
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
	// Recipient is who it was evaluated as: "" for the owner, a member's user
	// id or a burst's address; Filters are the conditions of their slice of
	// the data, and Addresses where their messages would go.
	Recipient string
	Filters   []string
	Addresses []string
}

// ErrNoRecipient is the answer to a preview as someone the subscription
// does not go to now.
var ErrNoRecipient = errors.New("the subscription does not go to that recipient")

// Preview evaluates the subscription's condition and renders its message
// now, without claiming an instant, exporting or sending anything: as its
// owner (recipient "") or as one of its recipients, a member by user id or
// an address of its burst. A subscription its owner may not have run gives
// the refusal (a *notify.Refusal) or why it is skipped; someone it does not
// go to now gives ErrNoRecipient, a member who may not have it run the
// reason.
func (e *Engine) Preview(ctx context.Context, sub store.Subscription, recipient string) (Preview, error) {
	now := e.now()
	progs, as, err := e.authorized(ctx, sub, now)
	if err != nil {
		return Preview{}, err
	}
	var addresses []string
	if recipient != "" {
		if as, addresses, err = e.recipient(ctx, sub, progs, as, recipient, now); err != nil {
			return Preview{}, err
		}
	}
	st, err := e.st.State(ctx, sub.ID)
	if err != nil {
		return Preview{}, err
	}
	ev, err := e.evaluate(ctx, as, progs, now, st.LastValues)
	p := Preview{Values: ev.detailValues(), Condition: ev.condition, Attachments: sub.Def.Attachments,
		Recipient: recipient, Filters: as.Filters.Conditions(), Addresses: addresses}
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
	if recipient != "" {
		return p, nil
	}
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

// recipient returns the principal a recipient of sub is evaluated as at an
// instant, and the addresses their messages go to.
func (e *Engine) recipient(ctx context.Context, sub store.Subscription, progs *programs, owner Principal, who string,
	at time.Time) (Principal, []string, error) {
	aud := &audience{}
	targets, err := e.audienceTargets(ctx, sub, progs, owner, at, aud)
	if err != nil {
		return Principal{}, nil, err
	}
	for _, t := range targets {
		addresses := t.addresses()
		if t.member == who || t.member == "" && slices.ContainsFunc(addresses, func(a string) bool { return strings.EqualFold(a, who) }) {
			return t.as, addresses, nil
		}
	}
	for _, s := range aud.Skips {
		if s.Recipient == who || (s.Address != "" && strings.EqualFold(s.Address, who)) {
			return Principal{}, nil, fmt.Errorf("%w: skipped: %s", ErrNoRecipient, s.Reason)
		}
	}
	return Principal{}, nil, ErrNoRecipient
}

// Recipients is who a subscription goes to now, as a fire would find them,
// without evaluating anything but a burst's report.
type Recipients struct {
	Items  []Recipient
	Slices int // distinct slices of the data among them
	// Skipped counts those a fire would skip, and Skips are the first of them.
	Skipped int
	Skips   []notify.Skip
	Rows    int // the rows of a burst's report
}

// Recipient is one recipient of a subscription: a member (a user id) or an
// address of a burst, where their messages go, and their slice of the data
// (Slice numbers the distinct slices from 0, in the order of their first
// recipient).
type Recipient struct {
	Member    string
	Addresses []string
	Filters   []string
	Slice     int
}

// Recipients lists the recipients of sub now: its members, or its burst's
// addresses, each with the slice of the data they see. A subscription its
// owner may not have run gives the refusal.
func (e *Engine) Recipients(ctx context.Context, sub store.Subscription) (Recipients, error) {
	now := e.now()
	progs, as, err := e.authorized(ctx, sub, now)
	if err != nil {
		return Recipients{}, err
	}
	aud := &audience{}
	targets, err := e.audienceTargets(ctx, sub, progs, as, now, aud)
	if err != nil {
		return Recipients{}, err
	}
	out := Recipients{Skipped: aud.skipped, Skips: aud.Skips, Rows: aud.Rows, Items: make([]Recipient, 0, len(targets))}
	numbers := map[Filters]int{}
	for _, t := range targets {
		n, ok := numbers[t.as.Filters]
		if !ok {
			n = len(numbers)
			numbers[t.as.Filters] = n
		}
		out.Items = append(out.Items, Recipient{Member: t.member, Addresses: t.addresses(), Filters: t.as.Filters.Conditions(), Slice: n})
	}
	out.Slices = len(numbers)
	return out, nil
}

// authorized returns the programs of sub and the principal its owner runs it
// as at an instant, or why its owner may not have it run: why it is skipped,
// or the refusal (a *notify.Refusal).
func (e *Engine) authorized(ctx context.Context, sub store.Subscription, at time.Time) (*programs, Principal, error) {
	progs, err := e.programs.get(sub.Def)
	if err != nil {
		return nil, Principal{}, err
	}
	d, err := e.authorize(ctx, sub, progs, at)
	switch {
	case err != nil:
		return nil, Principal{}, err
	case d.skip != "":
		return nil, Principal{}, errors.New(d.skip)
	case d.refusal != nil:
		return nil, Principal{}, d.refusal
	}
	return progs, d.as, nil
}
