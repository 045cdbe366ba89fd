package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/engine/cron"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// maxMissedRows bounds the skipped runs recorded for one subscription at one start: a
// long downtime of a frequent subscription records the first instants one by one and
// the rest in the last row.
const maxMissedRows = 100

// catchUp handles the instants a subscription missed while the service was
// down. The latest one within the grace window is returned to run once; every
// other missed instant gets a skipped run saying why: superseded by that
// catch-up fire, or past the grace window.
func (e *Engine) catchUp(ctx context.Context, sub store.Subscription, lastRun time.Time, now time.Time) (Fire, bool) {
	from := sub.Updated
	if lastRun.After(from) {
		from = lastRun
	}
	missed, more := e.missedInstants(sub, from, now)
	if len(missed) == 0 {
		return Fire{}, false
	}
	graceStart := now.Add(-e.cfg.Grace)
	// The latest missed instant runs if it is within the grace window.
	var latest time.Time
	if recent, _ := e.missedInstants(sub, maxTime(from, graceStart.Add(-time.Nanosecond)), now); len(recent) > 0 {
		latest = recent[len(recent)-1]
		for len(recent) == maxMissedRows { // a trigger faster than the cap allows: walk on
			recent, _ = e.missedInstants(sub, latest, now)
			if len(recent) > 0 {
				latest = recent[len(recent)-1]
			}
		}
	}
	var skipped []store.Run
	for i, at := range missed {
		if at.Equal(latest) {
			break
		}
		reason := fmt.Sprintf("missed while the service was down; past the grace window of %s when it started at %s",
			e.cfg.Grace, now.UTC().Format(time.RFC3339))
		if !at.Before(graceStart) {
			reason = fmt.Sprintf("missed while the service was down; within the grace window only the latest missed instant, %s, runs",
				latest.UTC().Format(time.RFC3339))
		}
		if more && i == len(missed)-1 {
			reason += fmt.Sprintf("; so were the later instants until %s, recorded in this run only", now.UTC().Format(time.RFC3339))
		}
		detail, _ := json.Marshal(map[string]string{"reason": reason})
		skipped = append(skipped, store.Run{ID: store.NewSortableID(), SubscriptionID: sub.ID, ScheduledAt: at, State: store.RunSkipped,
			Detail: detail, Started: now, Finished: now})
	}
	if len(skipped) > 0 {
		if _, err := e.st.ClaimRuns(ctx, skipped); err != nil {
			e.log.Error("record missed fires", "subscription", sub.ID, "err", err)
		}
	}
	return Fire{SubscriptionID: sub.ID, Owner: sub.Owner, At: latest, CatchUp: true}, !latest.IsZero()
}

// missedInstants returns the instants of sub's triggers after from and not after now,
// in order and without repeats, at most maxMissedRows of them; more reports that there
// were more.
func (e *Engine) missedInstants(sub store.Subscription, from, now time.Time) (out []time.Time, more bool) {
	type trig struct {
		s    *cron.Schedule
		loc  *time.Location
		next time.Time
	}
	var ts []*trig
	for _, t := range sub.Def.Triggers {
		if z, err := notify.ParseTrigger(t); err == nil {
			ts = append(ts, &trig{s: z.Schedule, loc: z.Location, next: z.Schedule.Next(from, z.Location)})
		}
	}
	for {
		var min time.Time
		for _, t := range ts {
			if !t.next.IsZero() && !t.next.After(now) && (min.IsZero() || t.next.Before(min)) {
				min = t.next
			}
		}
		if min.IsZero() {
			return out, false
		}
		if len(out) == maxMissedRows {
			return out, true
		}
		out = append(out, min)
		for _, t := range ts {
			if t.next.Equal(min) {
				t.next = t.s.Next(min, t.loc)
			}
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
