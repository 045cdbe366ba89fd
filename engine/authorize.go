package engine

import (
	"context"
	"time"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// ownerKey names what the decision reads of a subscription's owner at an
// instant: the runs of one instant share it, and the next instant reads it
// again.
type ownerKey struct {
	project, user string
	at            int64
}

// owner is what the decision reads of a subscription's owner: why the
// project takes no more runs (it is deleted), or the owner's standing in it.
type owner struct {
	gone     string
	standing notify.Standing
}

// objectKey names an object a subscription names, at an instant.
type objectKey struct {
	project, uri string
	at           int64
}

// decision is what authorize decided of a run: skip it (why), refuse it
// (why), or neither, and run it.
type decision struct {
	skip    string
	refusal *notify.Refusal
}

func (d decision) allowed() bool { return d.skip == "" && d.refusal == nil }

// ownerOf is the principal a subscription runs as: its owner, in its project.
func ownerOf(sub store.Subscription) Principal {
	return Principal{User: sub.Owner, Project: sub.ProjectID}
}

// authorize takes, at every fire and before any execution, the decision the
// API takes for its callers (notify.Decide): whether the owner of sub may
// have it run at instant at, as an enabled member of the project whose roles
// let them execute (and export, when it attaches reports), who can read
// every metric its condition and templates evaluate (p's) and every report
// it attaches. A run of a deleted project is skipped. What the decision
// reads is shared by the runs of one instant.
func (e *Engine) authorize(ctx context.Context, sub store.Subscription, p *programs, at time.Time) (decision, error) {
	o, err := e.owners.get(ctx, ownerKey{sub.ProjectID, sub.Owner, at.UnixNano()}, func(ctx context.Context) (owner, error) {
		gone, err := e.domain.ProjectGone(ctx, sub.ProjectID)
		if gone != "" || err != nil {
			return owner{gone: gone}, err
		}
		st, err := e.domain.Access().UserStanding(ctx, sub.ProjectID, sub.Owner)
		return owner{standing: st}, err
	})
	switch {
	case err != nil:
		return decision{}, err
	case o.gone != "":
		return decision{skip: o.gone}, nil
	}
	needs := notify.FireNeeds(sub, p.metrics)
	objects := make(map[string]notify.Object, len(needs.Objects))
	if r := notify.Decide(o.standing, needs, nil); r == nil || r.Code == notify.Unreadable {
		for _, n := range needs.Objects {
			obj, err := e.objects.get(ctx, objectKey{sub.ProjectID, n.URI, at.UnixNano()}, func(ctx context.Context) (notify.Object, error) {
				return e.domain.Access().Object(ctx, sub.ProjectID, n.URI)
			})
			if err != nil {
				return decision{}, err
			}
			objects[n.URI] = obj
		}
	}
	return decision{refusal: notify.Decide(o.standing, needs, objects)}, nil
}
