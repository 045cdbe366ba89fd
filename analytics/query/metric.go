package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
)

// frame is the context of an expression: the level it is computed at, the WHERE
// conditions of the SELECTs around it, and the report metric it belongs to.
type frame struct {
	grain []int
	conds []maql.Cond
	field string
	depth int
}

// group is an aggregation subquery: the aggregations over one base table at one level.
type group struct {
	name   string
	base   string
	grain  []int
	scope  *scope
	keys   []string // key expressions, in grain order
	dates  []string // the date each key is computed from ("" for other attributes)
	where  []string // the report's filters
	leaves []leaf
	byKey  map[string]int
}

// leaf is one aggregation of a group; filter holds the WHERE conditions of its SELECTs.
type leaf struct {
	agg    string
	count  bool
	filter string
}

func (c *compiler) fail(f frame, format string, args ...any) error {
	return &Error{Field: f.field, Msg: fmt.Sprintf(format, args...)}
}

// selectExpr compiles a SELECT at the level its BY clause leaves of f's.
func (c *compiler) selectExpr(s maql.Select, f frame) (string, error) {
	grain, err := c.by(s.By, f.grain, f.field)
	if err != nil {
		return "", err
	}
	inner := frame{grain: grain, conds: f.conds, field: f.field, depth: f.depth}
	if s.Where != nil {
		inner.conds = append(slices.Clip(f.conds), s.Where)
	}
	return c.expr(s.Expr, inner)
}

// expr compiles an expression over aggregated values.
func (c *compiler) expr(e maql.Expr, f frame) (string, error) {
	switch x := e.(type) {
	case maql.Select:
		return c.selectExpr(x, f)
	case maql.Agg:
		return c.leaf(x, f)
	case maql.Number:
		return c.bind(x.Float()), nil
	case maql.Ifnull:
		inner, err := c.expr(x.Expr, f)
		return "COALESCE(" + inner + ", " + c.bind(x.Default.Float()) + ")", err
	case maql.Unary:
		inner, err := c.expr(x.X, f)
		return "(-" + inner + ")", err
	case maql.Binary:
		l, err := c.expr(x.Left, f)
		if err != nil {
			return "", err
		}
		r, err := c.expr(x.Right, f)
		return arith(l, x.Op, r), err
	case maql.Ref:
		o, err := c.object(x.URI, f.field)
		if err != nil {
			return "", err
		}
		if o.Category != CategoryMetric || o.Metric == nil {
			return "", c.fail(f, "%s is {%s}, not a metric; aggregate facts and count attributes", x, o.Identifier)
		}
		return c.sharedMetric(x.URI, o, f)
	}
	return "", c.fail(f, "unknown expression %T", e)
}

// sharedMetric compiles a metric that another metric uses. One the report reaches more
// than once is compiled once per level and conditions, into a column of the final
// SELECT, whose name it returns; one reached once is written in place.
func (c *compiler) sharedMetric(uri string, o Object, f frame) (string, error) {
	key := fmt.Sprintf("%s\x00%v\x00%#v", uri, f.grain, f.conds)
	if col, ok := c.shared[key]; ok {
		return col, nil
	}
	if f.depth >= maxDepth {
		return "", c.fail(f, "metrics use metrics more than %d deep", maxDepth)
	}
	inner := f
	inner.depth++
	sql, err := c.selectExpr(o.Metric.Root, inner)
	if err != nil || c.uses[uri] < 2 || len(sql) <= inlineSQL {
		return sql, err // used once, or as short as a column's name: written in place
	}
	col := sharedColumn(len(c.sharedCols))
	if c.shared == nil {
		c.shared = map[string]string{}
	}
	c.shared[key] = col
	c.sharedCols = append(c.sharedCols, sql+" AS "+col)
	c.sharedSize += len(sql)
	if c.sharedSize > c.maxSQL {
		return "", c.fail(f, "{%s} is too complex: its metrics compile to more than %d KiB of SQL", o.Identifier, c.maxSQL>>10)
	}
	return col, nil
}

// inlineSQL is the length up to which a shared metric is written in place: a column
// reference such as q12.v3 costs no more than the shared column's name.
const inlineSQL = 32

// sharedColumn names the n-th shared metric's column: a name no table column has.
func sharedColumn(n int) string { return "__shared_" + strconv.Itoa(n) }

// arith writes l op r; a division by zero is NULL.
func arith(l, op, r string) string {
	if op == "/" {
		return "(" + l + " / NULLIF(" + r + ", 0))"
	}
	return "(" + l + " " + op + " " + r + ")"
}

// leaf compiles an aggregation into its group and returns the reference to its value.
func (c *compiler) leaf(x maql.Agg, f frame) (string, error) {
	base, err := c.leafBase(x, f)
	if err != nil {
		return "", err
	}
	g, err := c.group(base, f.grain, f.field)
	if err != nil {
		return "", err
	}
	var l leaf
	if x.Func == maql.FuncCount {
		ref, _ := x.Args[0].(maql.Ref)
		attr, _, err := c.attributeOf(ref.URI, f.field)
		if err != nil {
			return "", err
		}
		key, _, err := g.scope.key(attr)
		if err != nil {
			return "", c.fail(f, "%v", err)
		}
		l = leaf{agg: "count(DISTINCT " + key + ")", count: true}
		if c.m.Tables[base].ConnectionPoint == attr {
			l.agg = "count(" + key + ")" // the table's primary key: one row per element
		}
	} else {
		arg, err := c.aggArg(x.Args[0], g.scope, f)
		if err != nil {
			return "", err
		}
		l = leaf{agg: strings.ToLower(x.Func) + "(" + arg + ")"}
	}
	var conds []string
	for _, cond := range f.conds {
		s, err := g.scope.cond(cond, f.field)
		if err != nil {
			return "", err
		}
		conds = append(conds, s)
	}
	l.filter = and(conds)
	key := l.agg + "\x00" + l.filter
	i, ok := g.byKey[key]
	if !ok {
		i = len(g.leaves)
		g.byKey[key] = i
		g.leaves = append(g.leaves, l)
	}
	return g.name + ".v" + strconv.Itoa(i), nil
}

// aggArg compiles the argument of an aggregation over the rows of a scope.
func (c *compiler) aggArg(e maql.Expr, s *scope, f frame) (string, error) {
	switch x := e.(type) {
	case maql.Ref:
		o, err := c.object(x.URI, f.field)
		if err != nil {
			return "", err
		}
		fact := c.m.Facts[o.Identifier]
		if ldm.Kind(o.Category) != ldm.KindFact || fact == nil {
			return "", c.fail(f, "%s is {%s}, not a fact; only facts can be aggregated", x, o.Identifier)
		}
		return s.aliasOf(fact.Column.Table) + "." + ident(fact.Column.Name), nil
	case maql.Number:
		return c.bind(x.Float()), nil
	case maql.Unary:
		inner, err := c.aggArg(x.X, s, f)
		return "(-" + inner + ")", err
	case maql.Ifnull:
		inner, err := c.aggArg(x.Expr, s, f)
		return "COALESCE(" + inner + ", " + c.bind(x.Default.Float()) + ")", err
	case maql.Binary:
		l, err := c.aggArg(x.Left, s, f)
		if err != nil {
			return "", err
		}
		r, err := c.aggArg(x.Right, s, f)
		return arith(l, x.Op, r), err
	}
	return "", c.fail(f, "an aggregation takes facts, numbers and arithmetic, not %T", e)
}

// facts lists the tables of the facts an aggregation's argument uses, in order.
func (c *compiler) facts(e maql.Expr, f frame, out []string) ([]string, error) {
	switch x := e.(type) {
	case maql.Ref:
		o, err := c.object(x.URI, f.field)
		if err != nil {
			return nil, err
		}
		fact := c.m.Facts[o.Identifier]
		if ldm.Kind(o.Category) != ldm.KindFact || fact == nil {
			return nil, c.fail(f, "%s is {%s}, not a fact; only facts can be aggregated", x, o.Identifier)
		}
		if c.m.Tables[fact.Column.Table] == nil {
			return nil, c.fail(f, "fact {%s} has no table yet; SYNCHRONIZE its dataset first", o.Identifier)
		}
		if !slices.Contains(out, fact.Column.Table) {
			out = append(out, fact.Column.Table)
		}
	case maql.Unary:
		return c.facts(x.X, f, out)
	case maql.Ifnull:
		return c.facts(x.Expr, f, out)
	case maql.Binary:
		out, err := c.facts(x.Left, f, out)
		if err != nil {
			return nil, err
		}
		return c.facts(x.Right, f, out)
	}
	return out, nil
}

// countUses counts, for every metric the report's metrics use, the ways it is reached
// from them, capped at 2: a metric reached twice or more is compiled once, into a shared
// column. Each metric is walked once, so a chain of metrics that each use the one below
// twice costs as much as its length.
func (c *compiler) countUses(roots []string) {
	children := map[string]map[string]int{} // metric → the metrics its expression names, and how often
	var order []string                      // post-order: children before parents
	state := map[string]int{}               // 1 visiting, 2 done
	var walk func(uri string)
	walk = func(uri string) {
		if state[uri] != 0 {
			return // done, or a cycle, which compiling reports
		}
		state[uri] = 1
		o, ok := c.req.Objects[uri]
		kids := map[string]int{}
		if ok && o.Category == CategoryMetric && o.Metric != nil {
			refs(o.Metric.Root, func(r maql.Ref) {
				if ro, ok := c.req.Objects[r.URI]; ok && ro.Category == CategoryMetric && ro.Metric != nil {
					kids[r.URI]++
				}
			})
		}
		children[uri] = kids
		for k := range kids {
			walk(k)
		}
		state[uri] = 2
		order = append(order, uri)
	}
	paths := map[string]int{}
	for _, r := range roots {
		walk(r)
		paths[r] = min(paths[r]+1, 2)
	}
	for i := len(order) - 1; i >= 0; i-- { // parents before children
		uri := order[i]
		for k, n := range children[uri] {
			paths[k] = min(paths[k]+n*paths[uri], 2)
		}
	}
	c.uses = paths
}

// refs calls fn for every reference in e's expression tree.
func refs(e maql.Expr, fn func(maql.Ref)) {
	switch x := e.(type) {
	case maql.Select:
		refs(x.Expr, fn)
	case maql.Agg:
		for _, a := range x.Args {
			refs(a, fn)
		}
	case maql.Ifnull:
		refs(x.Expr, fn)
	case maql.Unary:
		refs(x.X, fn)
	case maql.Binary:
		refs(x.Left, fn)
		refs(x.Right, fn)
	case maql.Ref:
		fn(x)
	}
}
