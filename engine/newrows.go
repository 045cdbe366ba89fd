package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/store"
)

// NewRows is what the engine needs of the analytics service for an
// attachment that sends only new rows (newRowsBy). The Analytics the engine
// is given provides it, or such attachments fail at export.
type NewRows interface {
	// ExecuteReportAfter executes report uri as Analytics.ExecuteReport
	// does, keeping only the rows whose date attribute attr is after day
	// after (days since 1899-12-31; 0 keeps every row), and returns the
	// result and the latest day among the rows it kept (0: none).
	ExecuteReportAfter(ctx context.Context, p Principal, uri, attr string, after int64) (ReportResult, int64, error)
}

var errNoNewRows = errors.New("the analytics service cannot keep only new rows (newRowsBy)")

// markKey names an attachment's high-water mark among a delivery's marks.
func markKey(a store.ReportAttachment) string { return a.Report + " " + a.NewRowsBy }

// reportKey is the key of an attachment's execution and files in the memos:
// the report, and for one that sends only new rows, the mark it starts after.
func reportKey(a store.ReportAttachment, after int64) string {
	if a.NewRowsBy == "" {
		return a.Report
	}
	return a.Report + "\x00after " + a.NewRowsBy + " " + strconv.FormatInt(after, 10)
}

// executeAttached executes the report of attachment a for the run, keeping
// only the rows after day after when a sends only new rows; it returns the
// latest day it kept (0 when a does not, or kept none).
func (e *Engine) executeAttached(ctx context.Context, p Principal, a store.ReportAttachment, after int64) (ReportResult, error) {
	if a.NewRowsBy == "" {
		return e.analytics.ExecuteReport(ctx, p, a.Report)
	}
	nr, ok := e.analytics.(NewRows)
	if !ok {
		return ReportResult{}, errNoNewRows
	}
	res, latest, err := nr.ExecuteReportAfter(ctx, p, a.Report, a.NewRowsBy, after)
	res.latest = latest
	return res, err
}

// group is the channels of a run that are sent the same files: those whose
// last deliveries left the same high-water marks. A subscription without
// newRowsBy has one group.
type group struct {
	after    map[string]int64 // mark key → the day the rows start after
	channels []string
	// What the run made for them: files[first:last] of the run's files,
	// the HTML body, whether every report was empty, and the marks to leave.
	first, last int
	html        string
	empty       bool
	highWater   map[string]int64
	data        []string // the digest of each attachment's data, for sendWhen changed
}

// groups sorts the channels of sub into groups by the marks marks holds of
// them; channels never sent anything start from nothing.
func groups(sub store.Subscription, atts []store.ReportAttachment, marks map[string]store.ChannelMark) []*group {
	var keys []string
	for _, a := range atts {
		if a.NewRowsBy != "" && !slices.Contains(keys, markKey(a)) {
			keys = append(keys, markKey(a))
		}
	}
	if len(keys) == 0 {
		return []*group{{channels: sub.Channels}}
	}
	var out []*group
	byAfter := map[string]*group{}
	for _, cid := range sub.Channels {
		after := map[string]int64{}
		var id strings.Builder
		for _, k := range keys {
			after[k] = marks[cid].HighWater[k]
			id.WriteString(strconv.FormatInt(after[k], 10) + " ")
		}
		g := byAfter[id.String()]
		if g == nil {
			g = &group{after: after}
			byAfter[id.String()] = g
			out = append(out, g)
		}
		g.channels = append(g.channels, cid)
	}
	return out
}

// groupOf returns the group of channel cid.
func groupOf(gs []*group, cid string) *group {
	for _, g := range gs {
		if slices.Contains(g.channels, cid) {
			return g
		}
	}
	return gs[0]
}

// leaveMarks sets the high-water marks g's deliveries leave: the latest day
// each attachment sent, or, when it sent no new rows, the mark it started
// after.
func (g *group) leaveMarks(atts []store.ReportAttachment, latest map[string]int64) {
	for _, a := range atts {
		if a.NewRowsBy == "" {
			continue
		}
		if g.highWater == nil {
			g.highWater = map[string]int64{}
		}
		k := markKey(a)
		g.highWater[k] = max(g.after[k], latest[k], g.highWater[k])
	}
}

// exportGroups exports the attachments for each group of channels, as
// principal owner at instant at, into d's files, and makes each group's
// HTML body of msg and its reports.
func (e *Engine) exportGroups(ctx context.Context, owner Principal, at time.Time, msg message, attachments []store.ReportAttachment,
	chk *checks, d *RunDetail) error {
	for _, g := range chk.groups { // channels sent the same files: one group but for newRowsBy
		g.first = len(d.Files)
		files, reports, gots, err := e.attachAll(ctx, owner, attachments, at, func(a store.ReportAttachment) attachOpts {
			return attachOpts{after: g.after[markKey(a)], data: chk.compares()}
		})
		d.Files = append(d.Files, files...)
		if err != nil {
			return err
		}
		latest := map[string]int64{}
		for i, got := range gots {
			latest[markKey(attachments[i])], g.data = got.latest, append(g.data, got.data)
		}
		g.last, g.html, g.empty = len(d.Files), body(msg, reports), len(attachments) > 0 && len(d.Files) == g.first
		g.leaveMarks(attachments, latest)
	}
	chk.files = d.Files
	return nil
}
