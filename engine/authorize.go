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
// project takes no more runs (it is deleted), or the owner's standing in it
// and the slice of the data their user filters leave them.
type owner struct {
	gone     string
	standing notify.Standing
	filters  Filters
}

// objectKey names an object a subscription names, at an instant.
type objectKey struct {
	project, uri string
	at           int64
}

// decision is what authorize decided of a run: skip it (why), refuse it
// (why), or neither, and run it as the owner, as.
type decision struct {
	skip    string
	refusal *notify.Refusal
	as      Principal
}

func (d decision) allowed() bool { return d.skip == "" && d.refusal == nil }

// ownerSends reports whether a subscription sends to channels of its
// owner, as its owner: one with recipients or a burst may have none.
func ownerSends(sub store.Subscription) bool {
	return len(sub.Channels) > 0 || sub.Def.Recipients == nil && sub.Def.Burst == nil
}

// authorize takes, at every fire and before any execution, the decision the
// API takes for its callers (notify.Decide): whether the owner of sub may
// have it run at instant at, as an enabled member of the project whose roles
// let them execute (and export, when it attaches reports), who can read
// every metric its condition and templates evaluate (p's) and every report
// it attaches. A run of a deleted project is skipped. What the decision
// reads is shared by the runs of one instant, the owner's user filters with
// it: the principal the run goes on as.
func (e *Engine) authorize(ctx context.Context, sub store.Subscription, p *programs, at time.Time) (decision, error) {
	o, err := e.standing(ctx, sub.ProjectID, sub.Owner, at)
	switch {
	case err != nil:
		return decision{}, err
	case o.gone != "":
		return decision{skip: o.gone}, nil
	}
	refusal, err := e.decide(ctx, sub.ProjectID, o.standing, notify.FireNeeds(sub, p.metrics), at)
	if err != nil {
		return decision{}, err
	}
	return decision{refusal: refusal, as: Principal{User: sub.Owner, Project: sub.ProjectID, Filters: o.filters}}, nil
}

// decide takes the decision for a principal of standing st who needs what
// needs asks, reading the objects only when the standing alone allows it.
func (e *Engine) decide(ctx context.Context, project string, st notify.Standing, needs notify.Needs, at time.Time) (*notify.Refusal, error) {
	if r := notify.Decide(st, needs, nil); r != nil && r.Code != notify.Unreadable {
		return r, nil
	}
	objects, err := e.objectsOf(ctx, project, needs, at)
	if err != nil {
		return nil, err
	}
	return notify.Decide(st, needs, objects), nil
}

// standing reads what the decision needs of user in the project at an
// instant: why the project takes no runs, or the user's standing and user
// filters. The runs of one instant share it.
func (e *Engine) standing(ctx context.Context, project, user string, at time.Time) (owner, error) {
	return e.owners.get(ctx, ownerKey{project, user, at.UnixNano()}, func(ctx context.Context) (owner, error) {
		gone, err := e.domain.ProjectGone(ctx, project)
		if gone != "" || err != nil {
			return owner{gone: gone}, err
		}
		st, err := e.domain.Access().UserStanding(ctx, project, user)
		if err != nil {
			return owner{}, err
		}
		f, err := e.analytics.UserFilters(ctx, project, user)
		return owner{standing: st, filters: f}, err
	})
}

// objectsOf looks up the objects of needs, shared by the runs of an instant.
func (e *Engine) objectsOf(ctx context.Context, project string, needs notify.Needs, at time.Time) (map[string]notify.Object, error) {
	objects := make(map[string]notify.Object, len(needs.Objects))
	for _, n := range needs.Objects {
		obj, err := e.objects.get(ctx, objectKey{project, n.URI, at.UnixNano()}, func(ctx context.Context) (notify.Object, error) {
			return e.domain.Access().Object(ctx, project, n.URI)
		})
		if err != nil {
			return nil, err
		}
		objects[n.URI] = obj
	}
	return objects, nil
}
