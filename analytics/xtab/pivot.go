package xtab

import (
	"cmp"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	headers []header
	// The index of a tuple by its elements' ids: in pairs when the axis has
	// at most two attributes, else in a varint-encoded key built in buf.
	pairs map[[2]int64]int
	keys  map[string]int
	buf   []byte
}

// newAxis is an axis of levels, its index sized for about hint tuples.
func newAxis(levels []level, hint int) *axis {
	a := &axis{levels: levels, tuples: make([][]elem, 0, hint)}
	for _, l := range levels {
		if !l.Metric {
			a.attrs = append(a.attrs, l.Attr)
		}
	}
	switch len(a.attrs) {
	case 0:
	case 1, 2:
		a.pairs = make(map[[2]int64]int, hint)
	default:
		a.keys = make(map[string]int, hint)
	}
	return a
}

// add returns the index of the tuple of a flat row's elements on the axis.
func (a *axis) add(row []elem) int {
	switch len(a.attrs) {
	case 0:
		if len(a.tuples) > 0 {
			return 0
		}
	case 1, 2:
		var k [2]int64
		for i, attr := range a.attrs {
			k[i] = row[attr].ID
		}
		if i, ok := a.pairs[k]; ok {
			return i
		}
		a.pairs[k] = len(a.tuples)
	default:
		a.buf = a.buf[:0]
		for _, attr := range a.attrs {
			a.buf = binary.AppendVarint(a.buf, row[attr].ID)
		}
		if i, ok := a.keys[string(a.buf)]; ok {
			return i
		}
		a.keys[string(a.buf)] = len(a.tuples)
	}
	tuple := make([]elem, len(a.attrs))
	for i, attr := range a.attrs {
		tuple[i] = row[attr]
	}
	a.tuples = append(a.tuples, tuple)
	return len(a.tuples) - 1
}

// order lays out the axis's headers: every tuple with every metric, sorted level by
// level (dates by date, other attributes by label, metrics in report order). Elements
// with equal labels go by id; as a tuple is its elements' ids, no two headers compare
// equal, and the order needs no stable sort.
func (a *axis) order(metrics int) {
	mpos := metricLevel(a.levels)
	perTuple := 1
	if mpos >= 0 && metrics > 0 {
		perTuple = metrics
	}
	a.headers = make([]header, 0, len(a.tuples)*perTuple)
	for t := range a.tuples {
		if mpos < 0 || metrics == 0 {
			a.headers = append(a.headers, header{t, -1})
			continue
		}
		for m := range metrics {
			a.headers = append(a.headers, header{t, m})
		}
	}
	rank, sizes := a.ranks()
	if !a.sortByKeys(rank, sizes, metrics) {
		a.sortByRanks(rank)
	}
}

// sortByRanks sorts the headers comparing their ranks level by level.
func (a *axis) sortByRanks(rank []int) {
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

// keyedHeader is a header with its place in the order as one number.
type keyedHeader struct {
	key uint64
	header
}

// sortByKeys sorts the headers as sortByRanks does, faster: it numbers each
// header by its ranks, level by level, in a mixed radix of the levels' sizes,
// and sorts the numbers. It sorts nothing and returns false when the numbers
// would not fit in 64 bits.
func (a *axis) sortByKeys(rank, sizes []int, metrics int) bool {
	radix := make([]uint64, len(a.levels)) // each level's size
	span := uint64(1)
	at := 0
	for i, l := range a.levels {
		radix[i] = uint64(max(metrics, 1))
		if !l.Metric {
			radix[i] = uint64(max(sizes[at], 1))
			at++
		}
		if span > math.MaxUint64/radix[i] {
			return false
		}
		span *= radix[i]
	}
	n := len(a.attrs)
	keys := make([]keyedHeader, len(a.headers))
	for i, h := range a.headers {
		var key uint64
		at := 0
		for j, l := range a.levels {
			digit := max(h.metric, 0)
			if !l.Metric {
				digit = rank[h.tuple*n+at]
				at++
			}
			key = key*radix[j] + uint64(digit)
		}
		keys[i] = keyedHeader{key, h}
	}
	slices.SortFunc(keys, func(x, y keyedHeader) int { return cmp.Compare(x.key, y.key) })
	for i, k := range keys {
		a.headers[i] = k.header
	}
	return true
}

// ranks places each tuple's elements among the elements of their level: dates by
// date (their ids), other attributes by label, then id. The rank of tuple t's
// element at position at is rank[t*len(a.attrs)+at], and sizes[at] is how many
// elements that level has.
func (a *axis) ranks() (rank, sizes []int) {
	n := len(a.attrs)
	rank = make([]int, len(a.tuples)*n)
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
		sizes = append(sizes, len(elems))
		at++
	}
	return rank, sizes
}

// elems returns a header's elements, one per level.
func (a *axis) elems(h header, metrics []Metric) []elem {
	return a.appendElems(make([]elem, 0, len(a.levels)), h, metrics)
}

// appendElems appends a header's elements, one per level, to out.
func (a *axis) appendElems(out []elem, h header, metrics []Metric) []elem {
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
	cells      cells
	flat       *flat
	metrics    []Metric
}

func pivot(p *plan, f *flat) (*table, error) {
	t := &table{rows: newAxis(p.Rows, len(f.attrs)), cols: newAxis(p.Columns, 0), flat: f, metrics: p.Metrics}
	at := make([][2]int, len(f.attrs))
	for i, row := range f.attrs {
		at[i] = [2]int{t.rows.add(row), t.cols.add(row)}
	}
	t.cells = newCells(len(t.rows.tuples), len(t.cols.tuples), at)
	t.rows.order(len(p.Metrics))
	t.cols.order(len(p.Metrics))
	if len(t.rows.headers)*max(len(t.cols.headers), 1) > maxCells {
		return nil, errTooLarge
	}
	return t, nil
}

// cells finds the flat row of a (row tuple, column tuple) pair: in a slice
// over every pair when the pairs are not many more than the flat rows, else
// in a map. The slice takes 4 bytes a pair, at most 16 a flat row: less than
// a map's entry.
type cells struct {
	cols   int
	dense  []int32 // [r*cols+c]: the flat row + 1, or 0
	sparse map[[2]int]int
}

// newCells indexes the flat rows, flat row i at the pair at[i], on axes of
// rows and cols tuples.
func newCells(rows, cols int, at [][2]int) cells {
	if pairs := rows * cols; pairs <= 4*len(at)+64 && len(at) < math.MaxInt32 {
		x := cells{cols: cols, dense: make([]int32, pairs)}
		for i, rc := range at {
			x.dense[rc[0]*cols+rc[1]] = int32(i + 1)
		}
		return x
	}
	x := cells{sparse: make(map[[2]int]int, len(at))}
	for i, rc := range at {
		x.sparse[rc] = i
	}
	return x
}

// at returns the flat row of row tuple r and column tuple c, false when the
// query had none.
func (x cells) at(r, c int) (int, bool) {
	if x.sparse == nil {
		i := x.dense[r*x.cols+c]
		return int(i) - 1, i > 0
	}
	i, ok := x.sparse[[2]int{r, c}]
	return i, ok
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
	heads := make([]elem, 0, len(t.rows.levels))
	for _, r := range t.rows.headers {
		// Column headers of one tuple side by side (its metrics, when
		// they are the innermost level) share one look-up.
		tuple, i, ok := -1, 0, false
		for j, c := range t.cols.headers {
			if c.tuple != tuple {
				tuple = c.tuple
				i, ok = t.cells.at(r.tuple, c.tuple)
			}
			m := max(r.metric, c.metric)
			valid[j] = false
			if ok && m >= 0 && t.flat.valid[i][m] {
				values[j], valid[j] = t.flat.values[i][m], true
			}
		}
		heads = t.rows.appendElems(heads[:0], r, t.metrics)
		if !fn(heads, values, valid) {
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
