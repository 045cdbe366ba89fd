package xtab

import (
	"context"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/maql"
)

// filterText writes a filter as a person reads it, with titles for objects and elements:
// `Region IN (East, West) AND Year = 2024`.
func (e *Executor) filterText(ctx context.Context, pid string, cat *catalog, cond maql.Cond) (string, error) {
	w := filterWriter{e: e, ctx: ctx, pid: pid, cat: cat}
	var b strings.Builder
	if err := w.cond(&b, cond, false); err != nil {
		return "", err
	}
	return b.String(), nil
}

type filterWriter struct {
	e   *Executor
	ctx context.Context
	pid string
	cat *catalog
}

func (w filterWriter) cond(b *strings.Builder, cond maql.Cond, nested bool) error {
	switch x := cond.(type) {
	case maql.And:
		return w.pair(b, x.Left, " AND ", x.Right, nested)
	case maql.Or:
		return w.pair(b, x.Left, " OR ", x.Right, nested)
	case maql.Not:
		b.WriteString("NOT ")
		return w.cond(b, x.Cond, true)
	case maql.Compare:
		b.WriteString(w.cat.titles[x.Left.URI] + " " + x.Op + " ")
		return w.value(b, x.Right)
	case maql.In:
		b.WriteString(w.cat.titles[x.Left.URI])
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		for i, v := range x.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := w.value(b, v); err != nil {
				return err
			}
		}
		b.WriteString(")")
	}
	return nil
}

func (w filterWriter) pair(b *strings.Builder, l maql.Cond, op string, r maql.Cond, nested bool) error {
	if nested {
		b.WriteString("(")
	}
	if err := w.cond(b, l, true); err != nil {
		return err
	}
	b.WriteString(op)
	if err := w.cond(b, r, true); err != nil {
		return err
	}
	if nested {
		b.WriteString(")")
	}
	return nil
}

func (w filterWriter) value(b *strings.Builder, v maql.Value) error {
	switch x := v.(type) {
	case maql.Text:
		b.WriteString(x.Value)
	case maql.Number:
		b.WriteString(x.Lit)
	case maql.ElementRef:
		els, err := w.e.md.Elements(w.ctx, w.pid, w.cat.ids[x.Obj.URI], analytics.ElementsRequest{IDs: []int64{x.ID}})
		if err != nil {
			return err
		}
		if len(els.Items) == 0 {
			b.WriteString("#" + strconv.FormatInt(x.ID, 10))
		} else {
			b.WriteString(els.Items[0].Title)
		}
	}
	return nil
}
