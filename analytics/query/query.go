package query

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
)

// CategoryMetric is the category of a metric object.
const CategoryMetric = "metric"

// Object is a metadata object a report names.
type Object struct {
	// Category is CategoryMetric or the kind of a model object (ldm.Kind).
	Category string
	// Identifier is the object's identifier; for a model object, its identifier in the model.
	Identifier string
	// Metric is the parsed expression of a metric, its references URIs.
	Metric *maql.Metric
}

// Request is a report to compile.
type Request struct {
	// Project is the project whose warehouse the query reads.
	Project string
	// Model is the project's logical data model.
	Model *ldm.Model
	// Objects are the objects the request and its metrics name, by URI.
	Objects map[string]Object
	// Attributes are the labels (or attributes, shown in their default label) the report
	// is broken down by, rows first.
	Attributes []Part
	// Metrics are the report's metrics.
	Metrics []Part
	// Filters restrict every metric.
	Filters []Filter
	// MaxSQL bounds the SQL the metrics compile to, in bytes; a report past it is an
	// *Error naming the metric. Default DefaultMaxSQL.
	MaxSQL int
}

// Part is an object of the request by URI; Field names it in errors.
type Part struct {
	URI   string
	Field string
}

// Filter is a condition on attributes; Field names it in errors.
type Filter struct {
	Cond  maql.Cond
	Field string
}

// Query is a compiled report. Each row of its result has two columns per attribute, the
// element id (BIGINT) and the label value (VARCHAR), followed by one DOUBLE per metric.
// Rows whose metrics are all NULL are left out; the rows come in no particular order.
type Query struct {
	SQL        string
	Args       []any
	Attributes []Attribute
	Metrics    int
}

// Attribute is an attribute column pair of the result.
type Attribute struct {
	// Attribute and Label are the identifiers of the attribute and of the label shown
	// (empty when the attribute has no label: its key is shown).
	Attribute string
	Label     string
	// DatePart is the date part of an attribute of a date dimension, else empty.
	DatePart string
}

// Error is a part of a request that cannot be compiled.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// maxDepth bounds how deeply metrics may use metrics.
const maxDepth = 32

// DefaultMaxSQL bounds the SQL a report's metrics compile to, in bytes, when
// Request.MaxSQL is zero.
const DefaultMaxSQL = 256 << 10

// Compile compiles a report into a query.
func Compile(req *Request) (*Query, error) {
	c := &compiler{req: req, m: req.Model, groups: map[string]*group{}, reachCache: map[string]*reach{},
		maxSQL: cmp.Or(req.MaxSQL, DefaultMaxSQL)}
	if err := c.grain(); err != nil {
		return nil, err
	}
	if err := c.filters(); err != nil {
		return nil, err
	}
	roots := make([]string, len(req.Metrics))
	for i, p := range req.Metrics {
		roots[i] = p.URI
	}
	c.countUses(roots)
	metrics := make([]string, len(req.Metrics))
	for i, p := range req.Metrics {
		o, err := c.object(p.URI, p.Field)
		if err != nil {
			return nil, err
		}
		if o.Category != CategoryMetric || o.Metric == nil {
			return nil, &Error{Field: p.Field, Msg: fmt.Sprintf("%s is not a metric", p.URI)}
		}
		f := frame{grain: c.reportGrain(), field: p.Field}
		if metrics[i], err = c.selectExpr(o.Metric.Root, f); err != nil {
			return nil, err
		}
		if c.sharedSize+len(metrics[i]) > c.maxSQL {
			return nil, &Error{Field: p.Field, Msg: fmt.Sprintf("{%s} is too complex: it compiles to more than %d KiB of SQL",
				o.Identifier, c.maxSQL>>10)}
		}
	}
	sql, err := c.assemble(metrics)
	if err != nil {
		return nil, err
	}
	q := &Query{SQL: sql, Args: c.args, Metrics: len(metrics)}
	for _, a := range c.attrs[:c.reportAttrs] {
		q.Attributes = append(q.Attributes, Attribute{Attribute: a.ident, Label: a.label, DatePart: a.a.DatePart})
	}
	return q, nil
}

// object returns the object a URI names.
func (c *compiler) object(uri, field string) (Object, error) {
	o, ok := c.req.Objects[uri]
	if !ok {
		return Object{}, &Error{Field: field, Msg: fmt.Sprintf("%s is not an object of this project", uri)}
	}
	return o, nil
}

// attributeOf returns the identifier of the attribute an attribute or label URI stands
// for, and the label's identifier ("" for an attribute URI).
func (c *compiler) attributeOf(uri, field string) (attr, label string, err error) {
	o, err := c.object(uri, field)
	if err != nil {
		return "", "", err
	}
	switch ldm.Kind(o.Category) {
	case ldm.KindAttribute:
		if c.m.Attributes[o.Identifier] != nil {
			return o.Identifier, "", nil
		}
	case ldm.KindLabel:
		if l := c.m.Labels[o.Identifier]; l != nil && c.m.Attributes[l.Attribute] != nil {
			return l.Attribute, o.Identifier, nil
		}
	}
	return "", "", &Error{Field: field, Msg: fmt.Sprintf("%s is not an attribute or a label", uri)}
}

// bind adds a parameter and returns its placeholder.
func (c *compiler) bind(v any) string {
	c.args = append(c.args, v)
	return fmt.Sprintf("$%d", len(c.args))
}

func and(conds []string) string {
	switch len(conds) {
	case 0:
		return ""
	case 1:
		return conds[0]
	}
	return "(" + strings.Join(conds, " AND ") + ")"
}
