package analytics

import (
	"context"
	"errors"
	"slices"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/store"
)

// ElementsRequest pages the elements of an attribute.
type ElementsRequest struct {
	IDs    []int64 // only these elements, when not empty
	Offset int
	Limit  int // 0: all
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
	out := Elements{Attribute: ObjectURI(pid, pm.ids[attrID]), Items: items, Total: total}
	if labelID != "" {
		out.Label = ObjectURI(pid, pm.ids[labelID])
	}
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
