package query

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
)

// compiler holds the state of one compilation.
type compiler struct {
	req *Request
	m   *ldm.Model
	// attrs are the attributes rows are grouped by: the report's first (reportAttrs of
	// them), then those that BY clauses derive from them.
	attrs       []*gattr
	reportAttrs int
	derived     map[string]int // attribute identifier to index in attrs
	// reportFilters are the report's filters.
	reportFilters []Filter
	// groups are the aggregation subqueries by base table and level; order keeps their
	// creation order.
	groups     map[string]*group
	order      []*group
	reachCache map[string]*reach
	args       []any
	// shared are the metrics used by other metrics, each compiled once per level and
	// conditions into a column of the final SELECT that later columns name: a metric
	// used twice is not written out twice.
	shared     map[string]string // key of a metric use to its column
	sharedCols []string          // "expression AS column", in the order compiled
	sharedSize int               // bytes of the shared columns
	uses       map[string]int    // metric URI → ways the report reaches it, capped at 2
	maxSQL     int
}

// gattr is an attribute of the report's rows, or one derived from them.
type gattr struct {
	ident string
	a     *ldm.Attribute
	label string // label identifier shown; "" when the attribute has none
	field string
	from  int // index of the report attribute a derived attribute is derived from; -1 else
}

// reach is what can be joined from a base table: every table reachable by following
// reference columns, nearest first.
type reach struct {
	order []string
	hops  map[string]hop // how a table other than the base is joined
}

// hop joins table to parent on parent.column = table's key.
type hop struct {
	parent, column, key string
}

// reachFrom returns the tables reachable from base.
func (c *compiler) reachFrom(base string) *reach {
	if r := c.reachCache[base]; r != nil {
		return r
	}
	r := &reach{order: []string{base}, hops: map[string]hop{}}
	for i := 0; i < len(r.order); i++ {
		t := c.m.Tables[r.order[i]]
		if t == nil {
			continue
		}
		for _, col := range t.Columns {
			target, key, ok := c.referenced(col)
			if !ok || target == base {
				continue
			}
			if _, seen := r.hops[target]; seen {
				continue
			}
			r.hops[target] = hop{parent: t.Name, column: col.Name, key: key}
			r.order = append(r.order, target)
		}
	}
	c.reachCache[base] = r
	return r
}

// referenced returns the table and key column a reference column points to.
func (c *compiler) referenced(col ldm.TableColumn) (table, key string, ok bool) {
	if col.Role != ldm.RoleReference {
		return "", "", false
	}
	a := c.m.Attributes[col.Object]
	if a == nil || a.DatePart != "" || c.m.Datasets[a.Dataset] == nil {
		return "", "", false
	}
	t := c.m.Tables[c.m.Datasets[a.Dataset].Table]
	if t == nil || t.Key == "" || t.ConnectionPoint != col.Object {
		return "", "", false
	}
	return t.Name, t.Key, true
}

// dateColumn returns the nearest table reachable from base with a reference column to
// the date dimension of a date attribute, and the column.
func (c *compiler) dateColumn(r *reach, a *ldm.Attribute) (table, column string, ok bool) {
	ds := c.m.Datasets[a.Dataset]
	if ds == nil || ds.Date == "" {
		return "", "", false
	}
	target := ds.Date + ".date"
	for _, name := range r.order {
		t := c.m.Tables[name]
		if t == nil {
			continue
		}
		for _, col := range t.Columns {
			if col.Role == ldm.RoleReference && col.Object == target {
				return name, col.Name, true
			}
		}
	}
	return "", "", false
}

// home returns an attribute's own table and key column.
func (c *compiler) home(a *ldm.Attribute) (table, key string, ok bool) {
	k, ok := a.HomeKey()
	if !ok || c.m.Tables[k.Column.Table] == nil {
		return "", "", false
	}
	return k.Column.Table, k.Column.Name, true
}

// reaches reports whether the attribute's key can be computed from base.
func (c *compiler) reaches(base, ident string) bool {
	a := c.m.Attributes[ident]
	if a == nil {
		return false
	}
	r := c.reachFrom(base)
	if a.DatePart != "" {
		_, _, ok := c.dateColumn(r, a)
		return ok
	}
	table, _, ok := c.home(a)
	return ok && slices.Contains(r.order, table)
}

// scope is the FROM clause of one subquery: a base table and the tables joined to it.
type scope struct {
	c     *compiler
	base  string
	r     *reach
	alias map[string]string
	joins []string
}

func (c *compiler) newScope(base string) *scope {
	return &scope{c: c, base: base, r: c.reachFrom(base), alias: map[string]string{base: "t0"}}
}

// from is the FROM clause.
func (s *scope) from() string {
	out := warehouse.TableRef(s.c.req.Project, s.base) + " t0"
	for _, j := range s.joins {
		out += " " + j
	}
	return out
}

// aliasOf joins the table (and those on the way to it) and returns its alias. Joins are
// LEFT JOINs on a table's primary key, so they never change how many rows there are.
func (s *scope) aliasOf(table string) string {
	if a, ok := s.alias[table]; ok {
		return a
	}
	h := s.r.hops[table]
	parent := s.aliasOf(h.parent)
	a := "t" + strconv.Itoa(len(s.alias))
	s.alias[table] = a
	s.joins = append(s.joins, fmt.Sprintf("LEFT JOIN %s %s ON %s.%s = %s.%s",
		warehouse.TableRef(s.c.req.Project, table), a, a, ident(h.key), parent, ident(h.column)))
	return a
}

// key returns the SQL of an attribute's key in the scope: its key column, the reference
// column that holds it, or for a date attribute the element id computed from the date,
// with the date itself.
func (s *scope) key(ident_ string) (expr, date string, err error) {
	a := s.c.m.Attributes[ident_]
	if a == nil {
		return "", "", fmt.Errorf("{%s} is not an attribute of the model", ident_)
	}
	if a.DatePart != "" {
		table, col, ok := s.c.dateColumn(s.r, a)
		if !ok {
			return "", "", s.unreachable(ident_)
		}
		date = s.aliasOf(table) + "." + ident(col)
		id, _ := warehouse.DateID(a.DatePart, date)
		return id, date, nil
	}
	table, col, ok := s.c.home(a)
	if !ok {
		return "", "", fmt.Errorf("attribute {%s} has no table yet; SYNCHRONIZE its dataset first", ident_)
	}
	if table == s.base {
		return "t0." + ident(col), "", nil
	}
	h, ok := s.r.hops[table]
	if !ok {
		return "", "", s.unreachable(ident_)
	}
	if s.c.m.Tables[table].ConnectionPoint == ident_ {
		return s.aliasOf(h.parent) + "." + ident(h.column), "", nil
	}
	return s.aliasOf(table) + "." + ident(col), "", nil
}

func (s *scope) unreachable(attr string) error {
	return fmt.Errorf("attribute {%s} cannot be reached from the dataset {%s}: no reference columns lead to it",
		attr, s.c.m.TableOwner(s.base))
}

// ident quotes an SQL identifier.
func ident(s string) string {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
