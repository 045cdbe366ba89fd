package query

import (
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/analytics/warehouse"
)

// filters checks the report's filters; they are compiled into every subquery.
func (c *compiler) filters() error {
	for _, f := range c.req.Filters {
		if _, err := c.condAttrs(f.Cond, f.Field); err != nil {
			return err
		}
	}
	c.reportFilters = c.req.Filters
	return nil
}

// condAttrs lists the attributes a condition needs.
func (c *compiler) condAttrs(cond maql.Cond, field string) ([]string, error) {
	switch x := cond.(type) {
	case maql.And:
		return c.condPair(x.Left, x.Right, field)
	case maql.Or:
		return c.condPair(x.Left, x.Right, field)
	case maql.Not:
		return c.condAttrs(x.Cond, field)
	case maql.Compare:
		a, _, err := c.attributeOf(x.Left.URI, field)
		return []string{a}, err
	case maql.In:
		a, _, err := c.attributeOf(x.Left.URI, field)
		return []string{a}, err
	}
	return nil, &Error{Field: field, Msg: fmt.Sprintf("unknown condition %T", cond)}
}

func (c *compiler) condPair(l, r maql.Cond, field string) ([]string, error) {
	a, err := c.condAttrs(l, field)
	if err != nil {
		return nil, err
	}
	b, err := c.condAttrs(r, field)
	return append(a, b...), err
}

// cond compiles a condition in the scope.
func (s *scope) cond(cond maql.Cond, field string) (string, error) {
	switch x := cond.(type) {
	case maql.And:
		return s.pair(x.Left, "AND", x.Right, field)
	case maql.Or:
		return s.pair(x.Left, "OR", x.Right, field)
	case maql.Not:
		inner, err := s.cond(x.Cond, field)
		return "(NOT " + inner + ")", err
	case maql.Compare:
		return s.compare(x, field)
	case maql.In:
		return s.in(x, field)
	}
	return "", &Error{Field: field, Msg: fmt.Sprintf("unknown condition %T", cond)}
}

func (s *scope) pair(l maql.Cond, op string, r maql.Cond, field string) (string, error) {
	a, err := s.cond(l, field)
	if err != nil {
		return "", err
	}
	b, err := s.cond(r, field)
	if err != nil {
		return "", err
	}
	return "(" + a + " " + op + " " + b + ")", nil
}

// subject is the attribute and label on the left of a comparison.
type subject struct {
	ident string
	a     *ldm.Attribute
	label string // the label compared with texts; "" when the attribute has none
}

func (s *scope) subject(ref maql.Ref, field string) (subject, error) {
	attr, label, err := s.c.attributeOf(ref.URI, field)
	if err != nil {
		return subject{}, err
	}
	a := s.c.m.Attributes[attr]
	if label == "" {
		label = a.DefaultLabel
	}
	return subject{ident: attr, a: a, label: label}, nil
}

// in compiles {x} [NOT] IN (values): elements by id, texts against the label, numbers
// against the label's (or the key's) value as a number.
func (s *scope) in(x maql.In, field string) (string, error) {
	sub, err := s.subject(x.Left, field)
	if err != nil {
		return "", err
	}
	var ids []int64
	var texts []string
	var parts []string
	for _, v := range x.Values {
		switch v := v.(type) {
		case maql.ElementRef:
			if err := s.checkElement(sub, v, field); err != nil {
				return "", err
			}
			ids = append(ids, v.ID)
		case maql.Text:
			texts = append(texts, v.Value)
		case maql.Number:
			p, err := s.compareNumber(sub, maql.OpEq, v, field)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
	}
	if len(ids) > 0 {
		p, err := s.elements(sub, ids, field)
		if err != nil {
			return "", err
		}
		parts = append([]string{p}, parts...)
	}
	if len(texts) > 0 {
		p, err := s.labelIn(sub, texts, field)
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	out := parts[0]
	if len(parts) > 1 {
		out = "(" + strings.Join(parts, " OR ") + ")"
	}
	if x.Not {
		out = "(NOT " + out + ")"
	}
	return out, nil
}

// compare compiles {x} op value.
func (s *scope) compare(x maql.Compare, field string) (string, error) {
	sub, err := s.subject(x.Left, field)
	if err != nil {
		return "", err
	}
	switch v := x.Right.(type) {
	case maql.ElementRef:
		if err := s.checkElement(sub, v, field); err != nil {
			return "", err
		}
		switch x.Op {
		case maql.OpEq:
			return s.elements(sub, []int64{v.ID}, field)
		case maql.OpNe:
			p, err := s.elements(sub, []int64{v.ID}, field)
			return "(NOT " + p + ")", err
		}
		if s.lookup(sub) {
			return "", &Error{Field: field, Msg: fmt.Sprintf("elements of {%s} compare only with = and <>", sub.ident)}
		}
		key, _, err := s.key(sub.ident)
		if err != nil {
			return "", &Error{Field: field, Msg: err.Error()}
		}
		return "(" + key + " " + x.Op + " " + s.c.bind(v.ID) + ")", nil
	case maql.Text:
		return s.labelCompare(sub, x.Op, s.c.bind(v.Value), field)
	case maql.Number:
		return s.compareNumber(sub, x.Op, v, field)
	}
	return "", &Error{Field: field, Msg: fmt.Sprintf("unknown value %T", x.Right)}
}

// checkElement checks that an element is one of the subject's attribute.
func (s *scope) checkElement(sub subject, e maql.ElementRef, field string) error {
	attr, _, err := s.c.attributeOf(e.Obj.URI, field)
	if err != nil {
		return err
	}
	if attr != sub.ident {
		return &Error{Field: field, Msg: fmt.Sprintf("element %s is an element of {%s}, not of {%s}", e, attr, sub.ident)}
	}
	return nil
}

// lookup reports whether the subject's element ids come from a lookup table.
func (s *scope) lookup(sub subject) bool {
	if sub.a.DatePart != "" {
		return false
	}
	table, key, ok := s.c.home(sub.a)
	if !ok {
		return false
	}
	col, _ := s.c.m.Tables[table].Column(key)
	return warehouse.HasLookup(col)
}

// elements compiles "the subject is one of the elements ids".
func (s *scope) elements(sub subject, ids []int64, field string) (string, error) {
	key, _, err := s.key(sub.ident)
	if err != nil {
		return "", &Error{Field: field, Msg: err.Error()}
	}
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = s.c.bind(id)
	}
	in := "(" + strings.Join(list, ", ") + ")"
	if !s.lookup(sub) {
		return "(" + key + " IN " + in + ")", nil
	}
	table, col, _ := s.c.home(sub.a)
	return "(" + key + " IN (SELECT key FROM " + warehouse.LookupRef(s.c.req.Project, table, col) + " WHERE id IN " + in + "))", nil
}

// labelIn compiles "the subject's label value is one of texts".
func (s *scope) labelIn(sub subject, texts []string, field string) (string, error) {
	list := make([]string, len(texts))
	for i, t := range texts {
		list[i] = s.c.bind(t)
	}
	return s.labelCompare(sub, "IN", "("+strings.Join(list, ", ")+")", field)
}

// labelCompare compiles "label op rhs", rhs being bound parameters. A label of another
// table is compared through the keys of the rows of that table that match.
func (s *scope) labelCompare(sub subject, op, rhs, field string) (string, error) {
	key, date, err := s.key(sub.ident)
	if err != nil {
		return "", &Error{Field: field, Msg: err.Error()}
	}
	if sub.a.DatePart != "" {
		expr, _ := warehouse.DateLabel(s.c.m.Labels[sub.label].DateFormat, date)
		return "(" + expr + " " + op + " " + rhs + ")", nil
	}
	if sub.label == "" || s.c.m.Labels[sub.label].Column.IsZero() {
		if table, col, _ := s.c.home(sub.a); s.c.columnType(table, col) == maql.TypeVarchar {
			return "(" + key + " " + op + " " + rhs + ")", nil
		}
		return "(CAST(" + key + " AS VARCHAR) " + op + " " + rhs + ")", nil
	}
	col := s.c.m.Labels[sub.label].Column
	text := func(prefix string) string {
		if s.c.columnType(col.Table, col.Name) != maql.TypeVarchar {
			return "CAST(" + prefix + ident(col.Name) + " AS VARCHAR)"
		}
		return prefix + ident(col.Name)
	}
	return s.labelMatch(sub, key, col, text, op, rhs), nil
}

// compareNumber compiles "subject op number": a date part's element id, or the label's
// (or key's) value read as a number.
func (s *scope) compareNumber(sub subject, op string, n maql.Number, field string) (string, error) {
	key, _, err := s.key(sub.ident)
	if err != nil {
		return "", &Error{Field: field, Msg: err.Error()}
	}
	v := s.c.bind(n.Float())
	if sub.a.DatePart != "" {
		return "(" + key + " " + op + " " + v + ")", nil
	}
	if sub.label == "" || s.c.m.Labels[sub.label].Column.IsZero() {
		return "(TRY_CAST(" + key + " AS DOUBLE) " + op + " " + v + ")", nil
	}
	col := s.c.m.Labels[sub.label].Column
	num := func(prefix string) string { return "TRY_CAST(" + prefix + ident(col.Name) + " AS DOUBLE)" }
	return s.labelMatch(sub, key, col, num, op, v), nil
}

// labelMatch compiles "value(label) op rhs": on the base table's column, or through the
// keys of the rows of the label's table that match.
func (s *scope) labelMatch(sub subject, key string, col ldm.Column, value func(prefix string) string, op, rhs string) string {
	if col.Table == s.base {
		return "(" + value("t0.") + " " + op + " " + rhs + ")"
	}
	table, home, _ := s.c.home(sub.a)
	return "(" + key + " IN (SELECT " + ident(home) + " FROM " + warehouse.TableRef(s.c.req.Project, table) +
		" WHERE " + ident(home) + " IS NOT NULL AND " + value("") + " " + op + " " + rhs + "))"
}

// columnType returns the name of a column's type.
func (c *compiler) columnType(table, column string) string {
	if t := c.m.Tables[table]; t != nil {
		if col, ok := t.Column(column); ok {
			return col.Type.Name
		}
	}
	return ""
}
