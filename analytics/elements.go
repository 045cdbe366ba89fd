package analytics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/analytics/query"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/store"
)

// ElementsRequest pages the elements of an attribute.
type ElementsRequest struct {
	IDs    []int64 // only these elements, when not empty
	Offset int
	Limit  int // 0: all
	// Slice keeps the elements that the slice's rows have: with a user's
	// mandatory filters, the elements that user sees.
	Slice Slice
}

// Elements is a page of an attribute's elements, shown in one label.
type Elements struct {
	Attribute string // URI
	Label     string // URI
	Items     []warehouse.Element
	Total     int64
}

// Elements lists the elements of an attribute, shown in the label the URI names (the
// default label for an attribute URI).
func (s *Service) Elements(ctx context.Context, pid string, id int64, req ElementsRequest) (Elements, error) {
	o, err := s.store.ObjectByID(ctx, pid, id)
	if errors.Is(err, store.ErrNotFound) {
		return Elements{}, &NotFoundError{Kind: "object", ID: itoa(id)}
	}
	if err != nil {
		return Elements{}, err
	}
	pm, err := s.model(ctx, pid)
	if err != nil {
		return Elements{}, err
	}
	m := pm.model
	attrID, labelID := o.Identifier, ""
	switch ldm.Kind(o.Category) {
	case ldm.KindLabel:
		labelID = o.Identifier
		attrID = m.Labels[labelID].Attribute
	case ldm.KindAttribute:
		labelID = m.Attributes[attrID].DefaultLabel
	default:
		return Elements{}, invalid("", "%s is %s; only attributes and labels have elements", ObjectURI(pid, id), describe(o))
	}
	a := m.Attributes[attrID]
	out := Elements{Attribute: ObjectURI(pid, pm.ids[attrID])}
	if labelID != "" {
		out.Label = ObjectURI(pid, pm.ids[labelID])
	}
	if !req.Slice.Whole() {
		ids, err := s.sliceElements(ctx, pid, out.Attribute, req.Slice, req.IDs)
		if err != nil || len(ids) == 0 {
			return out, err
		}
		req.IDs = ids
	}
	q := warehouse.ElementsQuery{IDs: req.IDs, Offset: req.Offset, Limit: req.Limit}
	if a.DatePart != "" {
		q.DatePart, q.DateFormat, q.DateColumns = a.DatePart, m.Labels[labelID].DateFormat,
			dateColumns(m, m.Datasets[a.Dataset].Date+".date")
	} else {
		home, ok := a.HomeKey()
		t := m.Tables[home.Column.Table]
		if !ok || a.Dataset == "" || t == nil {
			return Elements{}, invalid("", "attribute {%s} has no table yet; SYNCHRONIZE its dataset first", attrID)
		}
		q.Table, q.Key = t, home.Column.Name
		if labelID != "" {
			q.Label = m.Labels[labelID].Column.Name
			if _, ok := t.Column(q.Label); !ok {
				return Elements{}, invalid("", "label {%s} has no column yet; SYNCHRONIZE {%s} first", labelID, a.Dataset)
			}
		}
	}
	items, total, err := s.wh.Elements(ctx, pid, q)
	if err != nil {
		return Elements{}, err
	}
	out.Items, out.Total = items, total
	return out, nil
}

// dateColumns lists the synchronized reference columns to a date dimension.
func dateColumns(m *ldm.Model, dateAttr string) []ldm.Column {
	var out []ldm.Column
	for _, name := range sortedTables(m) {
		for _, c := range m.Tables[name].Columns {
			if c.Role == ldm.RoleReference && c.Object == dateAttr {
				out = append(out, ldm.Column{Table: name, Name: c.Name})
			}
		}
	}
	return out
}

func sortedTables(m *ldm.Model) []string {
	names := make([]string, 0, len(m.Tables))
	for n := range m.Tables {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// sliceElements returns the elements of the attribute at attrURI that rows
// of the slice have, of only (all when empty): the elements the slice's
// conditions allow, and those related to them through a dataset that
// reaches both, as an execution of the attribute's count over the slice
// finds them. An attribute the slice's conditions cannot be applied to has
// none to show: the slice fails closed.
func (s *Service) sliceElements(ctx context.Context, pid, attrURI string, sl Slice, only []int64) ([]int64, error) {
	const count = "count"
	counted, err := maql.ParseMetric("SELECT COUNT([" + attrURI + "])")
	if err != nil {
		return nil, err
	}
	pm, err := s.model(ctx, pid)
	if err != nil {
		return nil, err
	}
	req := &query.Request{Project: pid, Model: pm.model, Objects: map[string]query.Object{count: {Category: CategoryMetric, Metric: counted}},
		Attributes: []query.Part{{URI: attrURI}}, Metrics: []query.Part{{URI: count}}}
	var refs []maql.Ref
	for i, c := range sl.conds {
		f, err := maql.ParseFilter(c)
		if err != nil {
			return nil, fmt.Errorf("data permission %q: %w", c, err)
		}
		refs = append(refs, f.Refs()...)
		req.Filters = append(req.Filters, query.Filter{Cond: f.Cond, Field: fmt.Sprintf("dataPermissions[%d]", i)})
	}
	r, err := s.resolve(ctx, pid, append(refs, maql.Ref{URI: attrURI}))
	if err != nil {
		return nil, err
	}
	for ref, o := range r.objs {
		req.Objects[ref.URI] = query.Object{Category: o.Category, Identifier: o.Identifier}
	}
	q, err := query.Compile(req)
	var qe *query.Error
	if errors.As(err, &qe) {
		return nil, invalid("", "the data permissions of the user cannot be applied to %s: %s", attrURI, qe.Msg)
	}
	if err != nil {
		return nil, err
	}
	keep := map[int64]bool{}
	for _, id := range only {
		keep[id] = true
	}
	var out []int64
	err = s.Query(ctx, pid, q.SQL, q.Args, func(rows *sql.Rows) error {
		for rows.Next() {
			var id sql.NullInt64
			var label sql.NullString
			var n sql.NullFloat64
			if err := rows.Scan(&id, &label, &n); err != nil {
				return err
			}
			if id.Valid && (len(only) == 0 || keep[id.Int64]) {
				out = append(out, id.Int64)
			}
		}
		return rows.Err()
	})
	slices.Sort(out)
	return slices.Compact(out), err
}
