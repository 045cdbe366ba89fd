package notify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
)

// Dates tells which attributes of a project hold dates, for newRowsBy.
type Dates interface {
	// IsDate reports whether uri names the date attribute of a date
	// dimension of project pid (false when it names nothing).
	IsDate(ctx context.Context, pid, uri string) (bool, error)
}

// parseChecks reads what a subscription's messages check before they go:
// onEmpty and sendWhen, each defaulting to send and always.
func parseChecks(in SubscriptionInput, def *store.SubscriptionDef) error {
	def.OnEmpty, def.SendWhen = store.OnEmptySend, store.SendAlways
	if in.OnEmpty != nil {
		switch *in.OnEmpty {
		case store.OnEmptySend, store.OnEmptySkip, store.OnEmptyNotifyOwner:
			def.OnEmpty = *in.OnEmpty
		default:
			return invalid(subRoot+".onEmpty", "must be send, skip or notifyOwner")
		}
	}
	if in.SendWhen != nil {
		switch *in.SendWhen {
		case store.SendAlways, store.SendChanged:
			def.SendWhen = *in.SendWhen
		default:
			return invalid(subRoot+".sendWhen", "must be always or changed")
		}
	}
	return nil
}

// parseNewRows checks each attachment's newRowsBy: the date attribute of a
// date dimension of the project.
func (s *Service) parseNewRows(ctx context.Context, pid string, in SubscriptionInput, atts []store.ReportAttachment) error {
	for i, a := range in.Attachments {
		if a.NewRowsBy == nil {
			continue
		}
		path := fmt.Sprintf("%s.attachments[%d].newRowsBy", subRoot, i)
		uri := *a.NewRowsBy
		if _, ok := objectIn(pid, uri); !ok {
			return invalid(path, "must be the URI of a date attribute of this project, /svc/md/"+pid+"/obj/<id>")
		}
		ok := false
		if s.dates != nil {
			var err error
			if ok, err = s.dates.IsDate(ctx, pid, uri); err != nil {
				return err
			}
		}
		if !ok {
			return invalid(path, uri+" is not the date attribute of a date dimension of this project")
		}
		atts[i].NewRowsBy = uri
	}
	return nil
}

// parsePrevious checks that every metric the condition and templates read
// with f:previous is a metric of the project, and names it in needs: its
// value is computed at every fire, to be the previous one at the next.
func (s *Service) parsePrevious(ctx context.Context, needs *Needs, pid string, def store.SubscriptionDef) error {
	prevs, err := previousRefs(def)
	if err != nil {
		return err
	}
	for _, p := range prevs {
		o, err := s.access.Object(ctx, pid, p.uri)
		if err != nil {
			return err
		}
		if !o.Found || o.Category != "metric" {
			return invalid(p.path, fmt.Sprintf("reads f:previous('%s'), which names no metric of this project", p.uri))
		}
		needs.Objects = append(needs.Objects, Metric(p.uri, p.path))
	}
	return nil
}

// prevRef is a metric read with f:previous, and where it is read.
type prevRef struct{ path, uri string }

// previousRefs lists the metrics the condition and templates of def read
// with f:previous.
func previousRefs(def store.SubscriptionDef) ([]prevRef, error) {
	type source struct{ path, src string }
	var prevs []prevRef
	cond, err := jexl.CompileCondition(def.Condition)
	if err != nil {
		return nil, err
	}
	for _, u := range cond.Previous() {
		prevs = append(prevs, prevRef{subRoot + ".condition.condition.expression", u})
	}
	for _, t := range []source{
		{subRoot + ".message.template.expression", def.Message},
		{subRoot + ".message.html.expression", def.MessageHTML},
		{subRoot + ".subject.template.expression", def.Subject},
		{subRoot + ".resolvedMessage.template.expression", def.Resolved},
	} {
		if t.src == "" {
			continue
		}
		tpl, err := jexl.ParseTemplate(t.src)
		if err != nil {
			return nil, err
		}
		for _, u := range tpl.Previous() {
			prevs = append(prevs, prevRef{t.path, u})
		}
	}
	return prevs, nil
}

// EmptyNotice is the delivery that tells the owner of sub, at their login
// address, that run sent nothing because its reports had no rows
// (onEmpty notifyOwner).
func (s *Service) EmptyNotice(ctx context.Context, sub store.Subscription, run store.Run) (store.Delivery, error) {
	ch, err := s.loginChannel(ctx, sub.Owner)
	if err != nil {
		return store.Delivery{}, err
	}
	p := store.Payload{
		Subject: fmt.Sprintf("Herald: subscription %q has nothing to send", sub.Title),
		Text: fmt.Sprintf("The subscription %q ran at %s and its reports had no rows, so nothing was sent to its channels. "+
			"You are told because it is set to onEmpty notifyOwner.\n", sub.Title, run.ScheduledAt.UTC().Format(time.RFC3339)),
		Source: channels.Source{Subscription: SubscriptionURI(sub), SubscriptionTitle: sub.Title, Run: run.ID,
			Instant: run.ScheduledAt},
	}
	return store.Delivery{ID: run.ID + "-notice-" + ch.ID, ChannelID: ch.ID, Kind: ch.Kind, Payload: p}, nil
}

// StageRender is the stage of a run whose message or files could not be
// rendered, or came out unreadable: nothing is sent, and the owner is told
// at once, as of a refused fire.
const StageRender = "render"

// renderFailed reports whether a run failed to render.
func renderFailed(run store.Run) bool {
	return run.State == store.RunFailed && strings.HasPrefix(run.Error, StageRender+": ")
}
