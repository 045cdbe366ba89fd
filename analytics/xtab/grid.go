package xtab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/store"
)

// ResultExists reports whether the project has the result (computed, computing or
// failed, not expired) that id names: an execution's object or the result itself.
func (e *Executor) ResultExists(ctx context.Context, pid, id string) (bool, error) {
	did, err := e.dataID(ctx, pid, id)
	return did != "", err
}

// ResultGrid returns a result laid out for the renderers, waiting while it computes. It
// is the exporter's source: an unknown result is ErrNoResult.
func (e *Executor) ResultGrid(ctx context.Context, pid, id string) (*grid.Grid, error) {
	did, err := e.dataID(ctx, pid, id)
	switch {
	case err != nil:
		return nil, err
	case did == "":
		return nil, ErrNoResult
	}
	id = did
	for range 2 {
		g, err := e.resultGrid(ctx, pid, id)
		if !lost(err) {
			return g, err
		}
	}
	return nil, fmt.Errorf("result %s: its file is lost again", id)
}

// resultGrid is ResultGrid's one attempt; a lost file is computed again.
func (e *Executor) resultGrid(ctx context.Context, pid, id string) (*grid.Grid, error) {
	r, err := e.wait(ctx, pid, id)
	if err != nil {
		return nil, err
	}
	if r.State == store.ResultFailed {
		return nil, &FailedError{ID: r.ID, Msg: r.Error}
	}
	p, err := decodePlan(r.Plan)
	if err != nil {
		return nil, err
	}
	g, rowLevels := gridHead(p)
	if r.State == store.ResultEmpty {
		return emptyGrid(g, p), nil
	}
	head, err := openFile(r.Path, len(rowLevels))
	if lost(err) {
		if rerr := e.recompute(ctx, r, p); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	g.Columns = columnsOf(p, head.header.Columns)
	head.close()
	g.Rows = func(yield func(grid.Row, error) bool) {
		f, err := openFile(r.Path, len(rowLevels))
		if err != nil {
			yield(grid.Row{}, err)
			return
		}
		defer f.close()
		for {
			heads := make([]elem, len(rowLevels))
			values := make([]*float64, len(f.header.Columns))
			err := f.next(heads, values)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(grid.Row{}, err)
				return
			}
			row := grid.Row{Headers: make([]string, len(heads)), Values: values}
			for i, h := range heads {
				row.Headers[i] = h.Label
			}
			if !yield(row, nil) {
				return
			}
		}
	}
	return g, nil
}

// gridHead returns a grid of the plan without its columns and rows, and the
// levels of its row headers.
func gridHead(p *plan) (*grid.Grid, []level) {
	g := &grid.Grid{Title: p.View.ReportName, Format: p.View.Format, Chart: p.Chart, Filters: p.Filters,
		RowHeaders: []string{}, RowKinds: []string{}}
	rowLevels := levelsShown(p.Rows, len(p.Metrics))
	for _, l := range rowLevels {
		kind, title := "", l.Title
		if l.Date {
			kind = "date"
		}
		if l.Metric {
			title = "Metric"
		}
		g.RowHeaders, g.RowKinds = append(g.RowHeaders, title), append(g.RowKinds, kind)
	}
	return g, rowLevels
}

// emptyGrid gives g the columns of a result without rows.
func emptyGrid(g *grid.Grid, p *plan) *grid.Grid {
	g.Columns = columnsOf(p, nil)
	g.Rows = func(func(grid.Row, error) bool) {}
	return g
}

// gridOf is the grid of a table computed in memory (nil when the query had
// no rows): the grid its result file would read back as.
func gridOf(p *plan, t *table) *grid.Grid {
	g, _ := gridHead(p)
	if t == nil {
		return emptyGrid(g, p)
	}
	g.Columns = columnsOf(p, t.columns())
	g.Rows = func(yield func(grid.Row, error) bool) {
		t.eachRow(func(heads []elem, values []float64, valid []bool) bool {
			row := grid.Row{Headers: make([]string, len(heads)), Values: make([]*float64, len(values))}
			for i, h := range heads {
				row.Headers[i] = h.Label
			}
			kept := slices.Clone(values) // the row's own: eachRow reuses values
			for j, ok := range valid {
				if ok {
					row.Values[j] = &kept[j]
				}
			}
			return yield(row, nil)
		})
	}
	return g
}

// columnsOf describes the data columns of a result: the labels of their headers and the
// format of their metric (of the first metric when the metrics are in rows).
func columnsOf(p *plan, headers [][]elem) []grid.Column {
	levels := levelsShown(p.Columns, len(p.Metrics))
	mpos := metricLevel(levels)
	out := make([]grid.Column, 0, len(headers))
	if headers == nil && mpos >= 0 {
		for _, m := range p.Metrics {
			out = append(out, grid.Column{Path: []string{m.Title}, Format: m.Format})
		}
		return out
	}
	for _, h := range headers {
		c := grid.Column{Path: make([]string, len(h))}
		for i, e := range h {
			c.Path[i] = e.Label
		}
		if mpos >= 0 && int(h[mpos].ID) < len(p.Metrics) {
			c.Format = p.Metrics[h[mpos].ID].Format
		} else if len(p.Metrics) > 0 {
			c.Format = p.Metrics[0].Format
		}
		out = append(out, c)
	}
	return out
}
