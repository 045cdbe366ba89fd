package query

import (
	"fmt"
	"slices"

	"github.com/heraldhq/herald/analytics/maql"
)

// grain resolves the report's attributes.
func (c *compiler) grain() error {
	c.derived = map[string]int{}
	for _, p := range c.req.Attributes {
		attr, label, err := c.attributeOf(p.URI, p.Field)
		if err != nil {
			return err
		}
		a := c.m.Attributes[attr]
		if label == "" {
			label = a.DefaultLabel
		}
		c.attrs = append(c.attrs, &gattr{ident: attr, a: a, label: label, field: p.Field, from: -1})
	}
	c.reportAttrs = len(c.attrs)
	return nil
}

// reportGrain is the level of the report's rows: all its attributes.
func (c *compiler) reportGrain() []int {
	out := make([]int, c.reportAttrs)
	for i := range out {
		out[i] = i
	}
	return out
}

// dateDerives says which parts of a date follow from which: a month gives its quarter and
// year. A week spans two years at the turn of one, so it gives nothing else.
var dateDerives = map[string][]string{
	"date":    {"week", "month", "quarter", "year", "day_of_week", "month_of_year", "quarter_of_year"},
	"month":   {"quarter", "year", "month_of_year", "quarter_of_year"},
	"quarter": {"year", "quarter_of_year"},
}

// derivable reports whether attribute x's element follows from attribute y's: x is y, a
// coarser part of the same date, or reachable from the table y is the primary key of.
func (c *compiler) derivable(x, y string) bool {
	if x == y {
		return true
	}
	ax, ay := c.m.Attributes[x], c.m.Attributes[y]
	if ax == nil || ay == nil {
		return false
	}
	if ay.DatePart != "" {
		return ax.DatePart != "" && ax.Dataset == ay.Dataset && slices.Contains(dateDerives[ay.DatePart], ax.DatePart)
	}
	table, _, ok := c.home(ay)
	if !ok || c.m.Tables[table].ConnectionPoint != y {
		return false
	}
	return c.reaches(table, x)
}

// by returns the level a BY clause leaves of grain:
//   - BY {x} aggregates at x: the attributes x follows from are replaced by x;
//   - BY ALL {x} ignores x and the attributes it follows from;
//   - BY ALL IN ALL OTHER DIMENSIONS keeps only the attributes of BY {x} and those that
//     follow from them.
func (c *compiler) by(b maql.By, grain []int, field string) ([]int, error) {
	if b.IsZero() {
		return grain, nil
	}
	resolve := func(refs []maql.Ref) ([]string, error) {
		out := make([]string, len(refs))
		for i, r := range refs {
			a, _, err := c.attributeOf(r.URI, field)
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	level, err := resolve(b.Attrs)
	if err != nil {
		return nil, err
	}
	ignore, err := resolve(b.All)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(grain)
	for _, x := range level {
		out = c.lockLevel(out, x)
	}
	if b.AllOther {
		out = slices.DeleteFunc(out, func(i int) bool {
			return !slices.ContainsFunc(level, func(x string) bool { return c.derivable(c.attrs[i].ident, x) })
		})
	}
	for _, x := range ignore {
		out = slices.DeleteFunc(out, func(i int) bool { return c.derivable(x, c.attrs[i].ident) })
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// lockLevel replaces the attributes of grain that x follows from by x.
func (c *compiler) lockLevel(grain []int, x string) []int {
	from := -1
	has := false
	out := grain[:0:0]
	for _, i := range grain {
		y := c.attrs[i].ident
		switch {
		case y == x:
			has = true
			out = append(out, i)
		case c.derivable(x, y):
			if from < 0 {
				from = c.root(i)
			}
		default:
			out = append(out, i)
		}
	}
	if has || from < 0 {
		return out
	}
	return append(out, c.derive(x, from))
}

// root returns the report attribute a grain attribute is, or is derived from.
func (c *compiler) root(i int) int {
	if i < c.reportAttrs {
		return i
	}
	return c.attrs[i].from
}

// derive returns the index of attribute x derived from report attribute from.
func (c *compiler) derive(x string, from int) int {
	for i := range c.reportAttrs {
		if c.attrs[i].ident == x {
			return i
		}
	}
	if i, ok := c.derived[x]; ok {
		return i
	}
	c.attrs = append(c.attrs, &gattr{ident: x, a: c.m.Attributes[x], from: from,
		field: fmt.Sprintf("%s (derived from %s)", x, c.attrs[from].ident)})
	c.derived[x] = len(c.attrs) - 1
	return len(c.attrs) - 1
}
