package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heraldhq/herald/analytics/maql"
)

// needs lists the attributes an aggregation at frame f must reach: its level, the
// report's filters and the conditions of its SELECTs.
func (c *compiler) needs(f frame) ([]string, error) {
	var out []string
	for _, i := range f.grain {
		out = append(out, c.attrs[i].ident)
	}
	for _, flt := range c.reportFilters {
		attrs, err := c.condAttrs(flt.Cond, flt.Field)
		if err != nil {
			return nil, err
		}
		out = append(out, attrs...)
	}
	for _, cond := range f.conds {
		attrs, err := c.condAttrs(cond, f.field)
		if err != nil {
			return nil, err
		}
		out = append(out, attrs...)
	}
	return out, nil
}

// missing returns the first of attrs that base cannot reach, or "".
func (c *compiler) missing(base string, attrs []string) string {
	for _, a := range attrs {
		if !c.reaches(base, a) {
			return a
		}
	}
	return ""
}

// leafBase chooses the table an aggregation runs on: the table of its facts, or for a
// COUNT the table of the counted attribute (or of the second argument), else a table of
// facts from which everything it needs can be reached.
func (c *compiler) leafBase(x maql.Agg, f frame) (string, error) {
	needs, err := c.needs(f)
	if err != nil {
		return "", err
	}
	if x.Func != maql.FuncCount {
		tables, err := c.facts(x.Args[0], f, nil)
		if err != nil {
			return "", err
		}
		if len(tables) == 0 {
			return "", c.fail(f, "%s needs a fact to aggregate", x.Func)
		}
		for _, t := range tables {
			var others []string
			for _, o := range tables {
				if !slices.Contains(c.reachFrom(t).order, o) {
					others = append(others, o)
				}
			}
			if len(others) > 0 {
				continue
			}
			if m := c.missing(t, needs); m != "" {
				return "", c.fail(f, "attribute {%s} cannot be reached from the dataset {%s} of the facts aggregated", m, c.m.TableOwner(t))
			}
			return t, nil
		}
		return "", c.fail(f, "the facts of one aggregation must be reachable from one dataset; {%s} are not",
			strings.Join(tables, "}, {"))
	}
	var prefer []string
	for i := len(x.Args) - 1; i >= 0; i-- {
		ref, ok := x.Args[i].(maql.Ref)
		if !ok {
			return "", c.fail(f, "COUNT counts the elements of attributes")
		}
		attr, _, err := c.attributeOf(ref.URI, f.field)
		if err != nil {
			return "", err
		}
		needs = append(needs, attr)
		if table, _, ok := c.home(c.m.Attributes[attr]); ok {
			prefer = append(prefer, table)
		}
	}
	for _, t := range c.candidates(prefer) {
		if c.missing(t, needs) == "" {
			return t, nil
		}
	}
	return "", c.fail(f, "no dataset reaches all of {%s}", strings.Join(needs, "}, {"))
}

// candidates lists the tables to try as a base: the preferred ones, then the tables of
// datasets with facts, then the others, each group by name.
func (c *compiler) candidates(prefer []string) []string {
	out := slices.Clone(prefer)
	var withFacts, others []string
	for _, name := range sortedKeys(c.m.Tables) {
		if slices.Contains(out, name) {
			continue
		}
		if ds := c.m.Datasets[c.m.Tables[name].Dataset]; ds != nil && len(ds.Facts) > 0 {
			withFacts = append(withFacts, name)
		} else {
			others = append(others, name)
		}
	}
	return append(append(out, withFacts...), others...)
}

// group returns the subquery of base at the level grain, creating it.
func (c *compiler) group(base string, grain []int, field string) (*group, error) {
	key := fmt.Sprint(base, grain)
	if g := c.groups[key]; g != nil {
		return g, nil
	}
	g := &group{name: fmt.Sprintf("q%d", len(c.order)), base: base, grain: grain, scope: c.newScope(base), byKey: map[string]int{}}
	for _, i := range grain {
		k, d, err := g.scope.key(c.attrs[i].ident)
		if err != nil {
			return nil, &Error{Field: field, Msg: err.Error()}
		}
		g.keys, g.dates = append(g.keys, k), append(g.dates, d)
	}
	for _, flt := range c.reportFilters {
		w, err := g.scope.cond(flt.Cond, flt.Field)
		if err != nil {
			return nil, err
		}
		g.where = append(g.where, w)
	}
	c.groups[key] = g
	c.order = append(c.order, g)
	return g, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
