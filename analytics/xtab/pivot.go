package xtab

import (
	"cmp"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxCells bounds the cells of one result.
const maxCells = 50_000_000

var errTooLarge = errors.New("the result has more than 50,000,000 cells; add filters or move attributes from columns to rows")

// scanBlock is how many rows scanFlat allocates at once.
const scanBlock = 256

// flat is the result of a plan's query: one row per combination of attribute elements.
type flat struct {
	attrs  [][]elem // per row, one element per query attribute
	values [][]float64
	valid  [][]bool
}

// scanFlat reads the rows of a plan's query.
func scanFlat(p *plan, rows *sql.Rows) (*flat, error) {
	na, nm := len(p.Attributes), len(p.Metrics)
	ids, labels := make([]sql.NullInt64, na), make([]sql.NullString, na)
	vals := make([]sql.NullFloat64, nm)
	dest := make([]any, 0, 2*na+nm)
	for i := range ids {
		dest = append(dest, &ids[i], &labels[i])
	}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	f := &flat{}
	// The rows' elements and values are cut from blocks of scanBlock rows, not
	// allocated row by row.
	var attrBlock []elem
	var valBlock []float64
	var okBlock []bool
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read result: %w", err)
		}
		if len(attrBlock) < na || len(valBlock) < nm {
			attrBlock, valBlock, okBlock = make([]elem, na*scanBlock), make([]float64, nm*scanBlock), make([]bool, nm*scanBlock)
		}
		attrs, v, ok := attrBlock[:na:na], valBlock[:nm:nm], okBlock[:nm:nm]
		attrBlock, valBlock, okBlock = attrBlock[na:], valBlock[nm:], okBlock[nm:]
		for i := range attrs {
			attrs[i] = elem{ID: ids[i].Int64, Label: labels[i].String}
		}
		for i, x := range vals {
			v[i], ok[i] = x.Float64, x.Valid
		}
		f.attrs, f.values, f.valid = append(f.attrs, attrs), append(f.values, v), append(f.valid, ok)
		if len(f.attrs)*max(nm, 1) > maxCells {
			return nil, errTooLarge
		}
	}
	return f, nil
}

// header is one header of an axis: a tuple of attribute elements, and a metric when the
// axis has the metric level (else -1).
type header struct {
	tuple, metric int
}

// axis is one side of the pivoted table.
type axis struct {
	levels  []level
	attrs   []int // the query attributes of the levels that are not metrics
	tuples  [][]elem
	index   map[string]int
	headers []header
}

func newAxis(levels []level) *axis {
	a := &axis{levels: levels, index: map[string]int{}}
	for _, l := range levels {
		if !l.Metric {
			a.attrs = append(a.attrs, l.Attr)
		}
	}
	return a
}

// add returns the index of the tuple of a flat row's elements on the axis; buf is
// scratch space for the key.
func (a *axis) add(row []elem, buf []byte) (int, []byte) {
	buf = buf[:0]
	for _, attr := range a.attrs {
		buf = binary.AppendVarint(buf, row[attr].ID)
	}
	if i, ok := a.index[string(buf)]; ok {
		return i, buf
	}
	tuple := make([]elem, len(a.attrs))
	for i, attr := range a.attrs {
		tuple[i] = row[attr]
	}
	a.index[string(buf)] = len(a.tuples)
	a.tuples = append(a.tuples, tuple)
	return len(a.tuples) - 1, buf
}

// order lays out the axis's headers: every tuple with every metric, sorted level by
// level (dates by date, other attributes by label, metrics in report order). Elements
// with equal labels go by id; as a tuple is its elements' ids, no two headers compare
// equal, and the order needs no stable sort.
func (a *axis) order(metrics int) {
	mpos := metricLevel(a.levels)
	for t := range a.tuples {
		if mpos < 0 || metrics == 0 {
			a.headers = append(a.headers, header{t, -1})
			continue
		}
		for m := range metrics {
			a.headers = append(a.headers, header{t, m})
		}
	}
	rank := a.ranks()
	n := len(a.attrs)
	slices.SortFunc(a.headers, func(x, y header) int {
		at := 0
		for _, l := range a.levels {
			if l.Metric {
				if c := cmp.Compare(x.metric, y.metric); c != 0 {
					return c
				}
				continue
			}
			if c := cmp.Compare(rank[x.tuple*n+at], rank[y.tuple*n+at]); c != 0 {
				return c
			}
			at++
		}
		return 0
	})
}

// ranks places each tuple's elements among the elements of their level: dates by
// date (their ids), other attributes by label, then id. The rank of tuple t's
// element at position at is ranks()[t*len(a.attrs)+at].
func (a *axis) ranks() []int {
	n := len(a.attrs)
	rank := make([]int, len(a.tuples)*n)
	at := 0
	for _, l := range a.levels {
		if l.Metric {
			continue
		}
		pos := map[int64]int{} // an element's id: its place in elems, then its rank
		var elems []elem
		for _, t := range a.tuples {
			if _, ok := pos[t[at].ID]; !ok {
				pos[t[at].ID] = len(elems)
				elems = append(elems, t[at])
			}
		}
		slices.SortFunc(elems, func(x, y elem) int {
			if !l.Date {
				if c := strings.Compare(x.Label, y.Label); c != 0 {
					return c
				}
			}
			return cmp.Compare(x.ID, y.ID)
		})
		for i, e := range elems {
			pos[e.ID] = i
		}
		for t, tuple := range a.tuples {
			rank[t*n+at] = pos[tuple[at].ID]
		}
		at++
	}
	return rank
}

// elems returns a header's elements, one per level.
func (a *axis) elems(h header, metrics []Metric) []elem {
	out := make([]elem, 0, len(a.levels))
	at := 0
	for _, l := range a.levels {
		if l.Metric {
			if h.metric >= 0 {
				out = append(out, elem{ID: int64(h.metric), Label: metrics[h.metric].Title})
			}
			continue
		}
		out = append(out, a.tuples[h.tuple][at])
		at++
	}
	return out
}

// levelsShown is the levels of the axis as its headers have them: the metric level
// goes when the report has no metrics.
func levelsShown(levels []level, metrics int) []level {
	if metrics > 0 {
		return levels
	}
	return slices.DeleteFunc(slices.Clone(levels), func(l level) bool { return l.Metric })
}

// table is a pivoted result.
type table struct {
	rows, cols *axis
	cells      map[[2]int]int // (row tuple, column tuple) -> flat row
	flat       *flat
	metrics    []Metric
}

func pivot(p *plan, f *flat) (*table, error) {
	t := &table{rows: newAxis(p.Rows), cols: newAxis(p.Columns), cells: make(map[[2]int]int, len(f.attrs)), flat: f, metrics: p.Metrics}
	var buf []byte
	for i, row := range f.attrs {
		var r, c int
		r, buf = t.rows.add(row, buf)
		c, buf = t.cols.add(row, buf)
		t.cells[[2]int{r, c}] = i
	}
	t.rows.order(len(p.Metrics))
	t.cols.order(len(p.Metrics))
	if len(t.rows.headers)*max(len(t.cols.headers), 1) > maxCells {
		return nil, errTooLarge
	}
	return t, nil
}

// columns returns the elements of each column header, one per level.
func (t *table) columns() [][]elem {
	out := make([][]elem, len(t.cols.headers))
	for i, c := range t.cols.headers {
		out[i] = t.cols.elems(c, t.metrics)
	}
	return out
}

// eachRow calls fn with each row's header elements and its cells, valid
// telling which hold a value, until fn returns false. The slices are fn's
// until it returns.
func (t *table) eachRow(fn func(heads []elem, values []float64, valid []bool) bool) {
	values, valid := make([]float64, len(t.cols.headers)), make([]bool, len(t.cols.headers))
	for _, r := range t.rows.headers {
		for j, c := range t.cols.headers {
			m := max(r.metric, c.metric)
			valid[j] = false
			if i, ok := t.cells[[2]int{r.tuple, c.tuple}]; ok && m >= 0 && t.flat.valid[i][m] {
				values[j], valid[j] = t.flat.values[i][m], true
			}
		}
		if !fn(t.rows.elems(r, t.metrics), values, valid) {
			return
		}
	}
}

// write writes the table into a result file.
func (t *table) write(path string) error {
	w, err := createFile(path, fileHeader{Rows: len(t.rows.headers), Columns: t.columns()})
	if err != nil {
		return err
	}
	t.eachRow(func(heads []elem, values []float64, valid []bool) bool {
		w.row(heads, values, valid)
		return true
	})
	return w.close()
}
