package xtab

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/store"
)

// Element is an element of a row's header: its id, and its value in the label
// the report shows.
type Element struct {
	ID    int64
	Label string
}

// RowLevel is a level of a result's row headers: the URI the report's grid
// names there (a label, or an attribute shown in its default label; "" for
// the metrics) and the identifier of its attribute.
type RowLevel struct {
	URI       string
	Attribute string
}

// RowHeaders returns the levels of a result's row headers and yields each
// row's header elements, one per level, waiting while it computes. A result
// that failed is a *FailedError, one the project does not have ErrNoResult.
func (e *Executor) RowHeaders(ctx context.Context, pid, id string) ([]RowLevel, iter.Seq2[[]Element, error], error) {
	did, err := e.dataID(ctx, pid, id)
	if err != nil {
		return nil, nil, err
	}
	if did == "" {
		return nil, nil, ErrNoResult
	}
	r, err := e.wait(ctx, pid, did)
	if err != nil {
		return nil, nil, err
	}
	if r.State == store.ResultFailed {
		return nil, nil, &FailedError{ID: r.ID, Msg: r.Error}
	}
	p, err := decodePlan(r.Plan)
	if err != nil {
		return nil, nil, err
	}
	var levels []RowLevel
	for i, l := range p.Rows {
		switch {
		case l.Metric && len(p.Metrics) == 0:
			continue // not shown
		case l.Metric:
			levels = append(levels, RowLevel{})
			continue
		}
		rl := RowLevel{Attribute: p.Attributes[l.Attr].Attribute}
		if i < len(p.View.Rows) {
			var item analytics.GridItem
			if json.Unmarshal(p.View.Rows[i], &item) == nil && item.Attribute != nil {
				rl.URI = item.Attribute.URI
			}
		}
		levels = append(levels, rl)
	}
	rows := func(yield func([]Element, error) bool) {
		if r.State == store.ResultEmpty {
			return
		}
		f, err := openFile(r.Path, len(levels))
		if err != nil {
			yield(nil, err)
			return
		}
		defer f.close()
		heads := make([]elem, len(levels))
		for {
			values := make([]*float64, len(f.header.Columns))
			err := f.next(heads, values)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			out := make([]Element, len(heads))
			for i, h := range heads {
				out[i] = Element(h)
			}
			if !yield(out, nil) {
				return
			}
		}
	}
	return levels, rows, nil
}
