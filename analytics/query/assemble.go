package query

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/warehouse"
)

// assemble writes the query: the subqueries as CTEs, the rows keyed by the report's
// attributes, the coarser subqueries joined back to them, the element ids and labels,
// and the metrics.
func (c *compiler) assemble(metrics []string) (string, error) {
	full, coarse, err := c.split()
	if err != nil {
		return "", err
	}
	var ctes []string
	carried := map[int]string{} // report attribute -> column of the keys that holds its label
	for _, g := range c.order {
		ctes = append(ctes, g.name+" AS ("+c.groupSQL(g, slices.Contains(full, g), len(full) == 1, carried)+")")
	}
	var b strings.Builder
	keys, cte := c.rows(&b, full)
	if cte != "" {
		ctes = append(ctes, cte)
	}
	for _, g := range coarse {
		if err := c.joinBack(&b, g, keys); err != nil {
			return "", err
		}
	}
	cols, err := c.attributeColumns(&b, keys, carried)
	if err != nil {
		return "", err
	}
	var where []string
	for i := range c.reportAttrs {
		where = append(where, fmt.Sprintf("%s.k%d IS NOT NULL", keys, i))
	}
	if len(c.sharedCols) > 0 {
		sql := c.layered(cols, metrics, b.String(), where)
		if len(ctes) > 0 {
			sql = "WITH " + strings.Join(ctes, ",\n") + "\n" + sql
		}
		return sql, nil
	}
	for j, m := range metrics {
		cols = append(cols, fmt.Sprintf("%s AS m%d", m, j))
	}
	inner := "SELECT " + strings.Join(cols, ", ") + b.String()
	if len(where) > 0 {
		inner += " WHERE " + strings.Join(where, " AND ")
	}
	sql := "SELECT * FROM (" + inner + ") r" + c.anyMetric(len(metrics))
	if len(ctes) > 0 {
		sql = "WITH " + strings.Join(ctes, ",\n") + "\n" + sql
	}
	return sql, nil
}

// anyMetric is the WHERE clause that keeps the rows where some metric has a value.
func (c *compiler) anyMetric(n int) string {
	if n == 0 {
		return ""
	}
	notNull := make([]string, n)
	for j := range notNull {
		notNull[j] = fmt.Sprintf("m%d IS NOT NULL", j)
	}
	return " WHERE " + strings.Join(notNull, " OR ")
}

// groupRef is how metric expressions name a subquery's value column: q3.v1.
var groupRef = regexp.MustCompile(`\b(q[0-9]+)\.(v[0-9]+)\b`)

// layered writes the rows of a report whose metrics share metrics: the first SELECT
// gives the rows with every subquery value under a flat name (q3_v1), each shared metric
// is computed once in a SELECT of its own around it, in the order compiled, and the
// report's metrics in the last. A shared metric's column is named by the SELECTs
// around it, never written out again: DuckDB expands an alias named in the same SELECT.
func (c *compiler) layered(cols, metrics []string, from string, where []string) string {
	var names []string
	for _, col := range cols {
		names = append(names, col[strings.LastIndex(col, " AS ")+4:])
	}
	for _, g := range c.order {
		for i := range g.leaves {
			ref := g.name + ".v" + strconv.Itoa(i)
			cols = append(cols, ref+" AS "+groupRef.ReplaceAllString(ref, "${1}_${2}"))
		}
	}
	sql := "SELECT " + strings.Join(cols, ", ") + from
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	for i, col := range c.sharedCols {
		sql = "SELECT *, " + groupRef.ReplaceAllString(col, "${1}_${2}") + " FROM (" + sql + ") s" + strconv.Itoa(i)
	}
	for j, m := range metrics {
		names = append(names, groupRef.ReplaceAllString(m, "${1}_${2}")+" AS m"+strconv.Itoa(j))
	}
	return "SELECT * FROM (SELECT " + strings.Join(names, ", ") + " FROM (" + sql + ") s) r" + c.anyMetric(len(metrics))
}

// split sorts the subqueries into those at the report's level, which give its rows, and
// the coarser ones. Without one at the report's level, a subquery of the attributes'
// keys is added.
func (c *compiler) split() (full, coarse []*group, err error) {
	n := c.reportAttrs
	for _, g := range c.order {
		if len(g.grain) == n && (n == 0 || g.grain[n-1] == n-1) {
			full = append(full, g)
		} else {
			coarse = append(coarse, g)
		}
	}
	if len(full) == 0 && n > 0 {
		g, err := c.keysGroup()
		if err != nil {
			return nil, nil, err
		}
		full = append(full, g)
	}
	return full, coarse, nil
}

// rows writes the FROM clause of the report's rows and returns the name that holds their
// keys, and the CTE that unites several subqueries' keys when there are several.
func (c *compiler) rows(b *strings.Builder, full []*group) (keys, cte string) {
	switch {
	case c.reportAttrs == 0 && len(full) == 0:
		b.WriteString(" FROM (SELECT 1) k")
		return "k", ""
	case c.reportAttrs == 0:
		b.WriteString(" FROM " + full[0].name)
		for _, g := range full[1:] {
			b.WriteString(" CROSS JOIN " + g.name)
		}
		return full[0].name, ""
	case len(full) == 1:
		b.WriteString(" FROM " + full[0].name)
		return full[0].name, ""
	}
	b.WriteString(" FROM k")
	for _, g := range full {
		b.WriteString(" LEFT JOIN " + g.name + " ON " + c.joinOn(g, "k", nil))
	}
	return "k", "k AS (" + c.keysUnion(full) + ")"
}

// joinBack joins a coarser subquery to the report's rows, through the mappings of the
// attributes it derives from them.
func (c *compiler) joinBack(b *strings.Builder, g *group, keys string) error {
	mapped := map[int]string{}
	for _, i := range g.grain {
		if i < c.reportAttrs || c.fromDate(i) {
			continue
		}
		m, err := c.mapping(i, keys)
		if err != nil {
			return err
		}
		b.WriteString(m)
		mapped[i] = "mp" + strconv.Itoa(i) + ".x"
	}
	b.WriteString(" LEFT JOIN " + g.name + " ON " + c.joinOn(g, keys, mapped))
	return nil
}

// keysGroup is the subquery that gives the report's rows when no aggregation is at their
// level: the attributes' keys from a table that reaches them all.
func (c *compiler) keysGroup() (*group, error) {
	f := frame{grain: c.reportGrain()}
	needs, err := c.needs(f)
	if err != nil {
		return nil, err
	}
	for _, t := range c.candidates(nil) {
		if c.missing(t, needs) == "" {
			return c.group(t, f.grain, c.attrs[0].field)
		}
	}
	return nil, &Error{Field: c.attrs[0].field, Msg: fmt.Sprintf("no dataset reaches all of {%s}", strings.Join(needs, "}, {"))}
}

// groupSQL writes a subquery. Full subqueries (at the report's level) also carry the
// date of each date attribute and, when they are the only one, the labels they can read
// without a join.
func (c *compiler) groupSQL(g *group, full, only bool, carried map[int]string) string {
	var cols []string
	for j, i := range g.grain {
		cols = append(cols, fmt.Sprintf("%s AS k%d", g.keys[j], i))
	}
	if full {
		for j, i := range g.grain {
			if g.dates[j] != "" {
				cols = append(cols, fmt.Sprintf("min(%s) AS d%d", g.dates[j], i))
			} else if col, ok := c.carryLabel(g, i); ok && only {
				cols = append(cols, fmt.Sprintf("any_value(%s) AS c%d", col, i))
				carried[i] = fmt.Sprintf("c%d", i)
			}
		}
	}
	where := g.where
	hoist := len(g.leaves) > 0 && g.leaves[0].filter != ""
	for _, l := range g.leaves {
		hoist = hoist && l.filter == g.leaves[0].filter
	}
	if hoist {
		where = append(where, g.leaves[0].filter)
	}
	for m, l := range g.leaves {
		agg := l.agg
		if l.filter != "" && !hoist {
			agg += " FILTER (WHERE " + l.filter + ")"
		}
		if l.count {
			agg = "NULLIF(" + agg + ", 0)"
		}
		cols = append(cols, fmt.Sprintf("CAST(%s AS DOUBLE) AS v%d", agg, m))
	}
	sql := "SELECT " + strings.Join(cols, ", ") + " FROM " + g.scope.from()
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	if len(g.grain) > 0 {
		pos := make([]string, len(g.grain))
		for j := range pos {
			pos[j] = strconv.Itoa(j + 1)
		}
		sql += " GROUP BY " + strings.Join(pos, ", ")
	}
	return sql
}

// carryLabel returns the column of a report attribute's label when the subquery already
// has its table.
func (c *compiler) carryLabel(g *group, i int) (string, bool) {
	a := c.attrs[i]
	if a.label == "" || c.m.Labels[a.label].Column.IsZero() {
		return "", false
	}
	col := c.m.Labels[a.label].Column
	alias, ok := g.scope.alias[col.Table]
	if !ok {
		return "", false
	}
	return alias + "." + ident(col.Name), true
}

// keysUnion writes the rows of several subqueries at the report's level.
func (c *compiler) keysUnion(full []*group) string {
	var cols, outer, parts []string
	for i := range c.reportAttrs {
		cols = append(cols, fmt.Sprintf("k%d", i))
		outer = append(outer, fmt.Sprintf("k%d", i))
	}
	var pos []string
	for i := range c.reportAttrs {
		pos = append(pos, strconv.Itoa(i+1))
		if c.attrs[i].a.DatePart != "" {
			cols = append(cols, fmt.Sprintf("d%d", i))
			outer = append(outer, fmt.Sprintf("min(d%d) AS d%d", i, i))
		}
	}
	for _, g := range full {
		parts = append(parts, "SELECT "+strings.Join(cols, ", ")+" FROM "+g.name)
	}
	return "SELECT " + strings.Join(outer, ", ") + " FROM (" + strings.Join(parts, " UNION ALL ") + ") u GROUP BY " + strings.Join(pos, ", ")
}

// joinOn writes how a subquery joins the report's rows: on each key it keeps, the derived
// ones through their mapping or their date.
func (c *compiler) joinOn(g *group, keys string, mapped map[int]string) string {
	var on []string
	for _, i := range g.grain {
		a := c.attrs[i]
		switch {
		case i < c.reportAttrs:
			on = append(on, fmt.Sprintf("%s.k%d = %s.k%d", g.name, i, keys, i))
		case c.fromDate(i):
			id, _ := warehouse.DateID(a.a.DatePart, fmt.Sprintf("%s.d%d", keys, a.from))
			on = append(on, fmt.Sprintf("%s.k%d = %s", g.name, i, id))
		default:
			on = append(on, fmt.Sprintf("%s.k%d = %s", g.name, i, mapped[i]))
		}
	}
	if len(on) == 0 {
		return "true"
	}
	return strings.Join(on, " AND ")
}

// fromDate reports whether derived attribute i is a part of the date of the report
// attribute it is derived from, and so computed from the date the rows carry.
func (c *compiler) fromDate(i int) bool {
	return c.attrs[i].a.DatePart != "" && c.attrs[c.attrs[i].from].a.DatePart != ""
}

// mapping joins, for a derived attribute, each element of the report attribute it is
// derived from to its own element.
func (c *compiler) mapping(i int, keys string) (string, error) {
	a := c.attrs[i]
	from := c.attrs[a.from]
	table, _, _ := c.home(from.a)
	s := c.newScope(table)
	y, _, err := s.key(from.ident)
	if err != nil {
		return "", &Error{Field: from.field, Msg: err.Error()}
	}
	x, _, err := s.key(a.ident)
	if err != nil {
		return "", &Error{Field: from.field, Msg: err.Error()}
	}
	return fmt.Sprintf(" LEFT JOIN (SELECT DISTINCT %s AS y, %s AS x FROM %s) mp%d ON mp%d.y = %s.k%d",
		y, x, s.from(), i, i, keys, a.from), nil
}

// attributeColumns writes the element id and label of each report attribute, joining
// lookups and label tables as needed.
func (c *compiler) attributeColumns(b *strings.Builder, keys string, carried map[int]string) ([]string, error) {
	var cols []string
	for i := range c.reportAttrs {
		a := c.attrs[i]
		k := fmt.Sprintf("%s.k%d", keys, i)
		var id, label string
		if a.a.DatePart != "" {
			id = k
			label, _ = warehouse.DateLabel(c.m.Labels[a.label].DateFormat, fmt.Sprintf("%s.d%d", keys, i))
		} else {
			table, key, ok := c.home(a.a)
			if !ok {
				return nil, &Error{Field: a.field, Msg: fmt.Sprintf("attribute {%s} has no table yet; SYNCHRONIZE its dataset first", a.ident)}
			}
			if col, _ := c.m.Tables[table].Column(key); warehouse.HasLookup(col) {
				fmt.Fprintf(b, " JOIN %s e%d ON e%d.key = %s", warehouse.LookupRef(c.req.Project, table, key), i, i, k)
				id = fmt.Sprintf("e%d.id", i)
			} else {
				id = "CAST(" + k + " AS BIGINT)"
			}
			label = c.labelColumn(b, i, k, keys, carried)
		}
		cols = append(cols, fmt.Sprintf("%s AS a%d", id, i), fmt.Sprintf("%s AS l%d", label, i))
	}
	return cols, nil
}

// labelColumn returns the label value of a report attribute that is not a date.
func (c *compiler) labelColumn(b *strings.Builder, i int, k, keys string, carried map[int]string) string {
	a := c.attrs[i]
	if a.label == "" || c.m.Labels[a.label].Column.IsZero() {
		return "CAST(" + k + " AS VARCHAR)"
	}
	if col, ok := carried[i]; ok {
		return "CAST(" + keys + "." + col + " AS VARCHAR)"
	}
	col := c.m.Labels[a.label].Column
	table, key, _ := c.home(a.a)
	var dim string
	if c.m.Tables[table].ConnectionPoint == a.ident {
		dim = fmt.Sprintf("SELECT %s AS k, %s AS v FROM %s", ident(key), ident(col.Name), warehouse.TableRef(c.req.Project, table))
	} else {
		dim = fmt.Sprintf("SELECT %s AS k, any_value(%s) AS v FROM %s GROUP BY 1", ident(key), ident(col.Name), warehouse.TableRef(c.req.Project, table))
	}
	fmt.Fprintf(b, " LEFT JOIN (%s) l%d ON l%d.k = %s", dim, i, i, k)
	return fmt.Sprintf("CAST(l%d.v AS VARCHAR)", i)
}
