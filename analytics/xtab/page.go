package xtab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Page limits: a page without a size has at most this many rows and columns.
const (
	MaxPageRows    = 10_000
	MaxPageColumns = 10_000
)

// Page asks for part of a result: from row Row and column Col, at most Rows rows and Cols
// columns (0: as many as a page holds).
type Page struct {
	Row, Col   int
	Rows, Cols int
}

// PageError is a malformed paging parameter.
type PageError struct {
	Param string
	Msg   string
}

func (e *PageError) Error() string { return e.Param + ": " + e.Msg }

// ParsePage reads the paging parameters of a data result's query,
// offset=<rows>,<columns> and size=<rows>,<columns>, separated by ";" or "&". Other
// parameters are ignored.
func ParsePage(rawQuery string) (Page, error) {
	var p Page
	for part := range strings.FieldsFuncSeq(rawQuery, func(r rune) bool { return r == ';' || r == '&' }) {
		key, value, _ := strings.Cut(part, "=")
		var a, b *int
		switch key {
		case "offset":
			a, b = &p.Row, &p.Col
		case "size":
			a, b = &p.Rows, &p.Cols
		default:
			continue
		}
		value = strings.ReplaceAll(value, "%2C", ",")
		value = strings.ReplaceAll(value, "%2c", ",")
		first, second, ok := strings.Cut(value, ",")
		x, err1 := strconv.Atoi(first)
		y, err2 := strconv.Atoi(second)
		if !ok || err1 != nil || err2 != nil || x < 0 || y < 0 || x > 1<<31 || y > 1<<31 {
			return Page{}, &PageError{Param: key, Msg: "must be two whole numbers, rows and columns: " + key + "=0,0"}
		}
		*a, *b = x, y
	}
	return p, nil
}

// XTab is a page of a result as the data result answers it (xtab_data).
type XTab struct {
	Rows        Headers     `json:"rows"`
	Columns     Headers     `json:"columns"`
	Data        [][]*string `json:"data"`
	OverallSize Size        `json:"overall_size"`
	Offset      Size        `json:"offset"`
	Size        Size        `json:"size"`
}

// Size counts rows and columns.
type Size struct {
	Rows    int `json:"rows"`
	Columns int `json:"columns"`
}

// Headers are the headers of one axis of a page: a lookup of labels per level (element
// id to label; metric index to title) and the header tree.
type Headers struct {
	Lookups []map[string]string `json:"lookups"`
	Tree    *Node               `json:"tree"`
}

// Node is a node of a header tree: the root, an attribute element ("normal") or a metric.
// First and Last are the positions in the page it spans; Index maps each child's id to
// its positions among Children.
type Node struct {
	ID       *string          `json:"id"`
	Type     string           `json:"type"`
	First    int              `json:"first"`
	Last     int              `json:"last"`
	Index    map[string][]int `json:"index"`
	Children []*Node          `json:"children"`
}

// AppendJSON appends the page as encoding/json encodes it, byte for byte, without
// reflection: a page of 10,000 rows has a row tree of 10,000 nodes.
func (x *XTab) AppendJSON(b []byte) []byte {
	if x == nil {
		return append(b, "null"...)
	}
	cells := 0
	for _, row := range x.Data {
		cells += len(row)
	}
	// about what a header node and a cell take, so that b grows once
	b = slices.Grow(b, 100*(len(x.Data)+x.Size.Columns)+24*cells)
	b = append(b, `{"rows":`...)
	b = x.Rows.appendJSON(b)
	b = append(b, `,"columns":`...)
	b = x.Columns.appendJSON(b)
	b = append(b, `,"data":`...)
	b = appendData(b, x.Data)
	for _, s := range []struct {
		key  string
		size Size
	}{{`,"overall_size":`, x.OverallSize}, {`,"offset":`, x.Offset}, {`,"size":`, x.Size}} {
		b = append(b, s.key...)
		b = append(b, `{"rows":`...)
		b = strconv.AppendInt(b, int64(s.size.Rows), 10)
		b = append(b, `,"columns":`...)
		b = strconv.AppendInt(b, int64(s.size.Columns), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (h *Headers) appendJSON(b []byte) []byte {
	b = append(b, `{"lookups":`...)
	if h.Lookups == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, l := range h.Lookups {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLookup(b, l)
		}
		b = append(b, ']')
	}
	b = append(b, `,"tree":`...)
	b = h.Tree.appendJSON(b)
	return append(b, '}')
}

// appendLookup encodes a lookup, its keys in order as encoding/json sorts them.
func appendLookup(b []byte, l map[string]string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(l)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, l[k])
	}
	return append(b, '}')
}

func appendData(b []byte, data [][]*string) []byte {
	if data == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, row := range data {
		if i > 0 {
			b = append(b, ',')
		}
		if row == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, c := range row {
			if j > 0 {
				b = append(b, ',')
			}
			if c == nil {
				b = append(b, "null"...)
			} else {
				b = appendJSONString(b, *c)
			}
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

func (n *Node) appendJSON(b []byte) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"id":`...)
	if n.ID == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *n.ID)
	}
	b = append(b, `,"type":`...)
	b = appendJSONString(b, n.Type)
	b = append(b, `,"first":`...)
	b = strconv.AppendInt(b, int64(n.First), 10)
	b = append(b, `,"last":`...)
	b = strconv.AppendInt(b, int64(n.Last), 10)
	b = append(b, `,"index":`...)
	b = appendIndex(b, n.Index)
	b = append(b, `,"children":`...)
	if n.Children == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range n.Children {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendIndex encodes a node's index: its keys in order, as encoding/json sorts them.
func appendIndex(b []byte, index map[string][]int) []byte {
	if index == nil {
		return append(b, "null"...)
	}
	keys := slices.Collect(maps.Keys(index))
	if len(keys) > 1 {
		slices.Sort(keys)
	}
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		positions := index[k]
		if positions == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, p := range positions {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJSONString encodes s as encoding/json does: printable ASCII other than the
// characters it escapes is written as is, anything else is left to encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// readPage reads a page of a result file.
func readPage(path string, p *plan, pg Page) (*XTab, error) {
	rowLevels := levelsShown(p.Rows, len(p.Metrics))
	r, err := openFile(path, len(rowLevels))
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	defer r.close()
	total := Size{Rows: r.header.Rows, Columns: len(r.header.Columns)}
	row, col := min(pg.Row, total.Rows), min(pg.Col, total.Columns)
	rows, cols := clamp(pg.Rows, total.Rows-row, MaxPageRows), clamp(pg.Cols, total.Columns-col, MaxPageColumns)
	if err := r.skip(row); err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	x := &XTab{OverallSize: total, Offset: Size{Rows: row, Columns: col}, Size: Size{Rows: rows, Columns: cols}, Data: make([][]*string, 0, rows)}
	rowHeads := make([][]elem, 0, rows)
	values := make([]*float64, total.Columns)
	for range rows {
		heads := make([]elem, len(rowLevels))
		if err := r.next(heads, values); err != nil {
			if errors.Is(err, io.EOF) {
				err = errCorrupt
			}
			return nil, fmt.Errorf("read result: %w", err)
		}
		rowHeads = append(rowHeads, heads)
		cells := make([]*string, cols)
		for j, v := range values[col : col+cols] {
			if v != nil {
				s := strconv.FormatFloat(*v, 'f', -1, 64)
				cells[j] = &s
			}
		}
		x.Data = append(x.Data, cells)
	}
	x.Rows = headersOf(rowLevels, rowHeads)
	x.Columns = headersOf(levelsShown(p.Columns, len(p.Metrics)), r.header.Columns[col:col+cols])
	return x, nil
}

// clamp is the size of a page: asked (0: the limit), within what is left and the limit.
func clamp(asked, left, limit int) int {
	if asked == 0 || asked > limit {
		asked = limit
	}
	return max(0, min(asked, left))
}

// headersOf builds the lookups and tree of an axis from its headers, in order.
func headersOf(levels []level, items [][]elem) Headers {
	h := Headers{Lookups: make([]map[string]string, len(levels))}
	for i := range h.Lookups {
		h.Lookups[i] = map[string]string{}
	}
	for j, it := range items {
		for i, e := range it {
			if j == 0 || items[j-1][i] != e { // the element of the item before is in already
				h.Lookups[i][strconv.FormatInt(e.ID, 10)] = e.Label
			}
		}
	}
	h.Tree = &Node{Type: "root", First: 0, Last: len(items) - 1, Index: map[string][]int{}, Children: []*Node{}}
	grow(h.Tree, levels, items, 0, len(items), 0)
	return h
}

// grow adds the children of n: the runs of items [from, to) with one element at depth.
func grow(n *Node, levels []level, items [][]elem, from, to, depth int) {
	if depth == len(levels) {
		return
	}
	typ := "normal"
	if levels[depth].Metric {
		typ = "metric"
	}
	runs := 0
	for i := from; i < to; i = runEnd(items, i, to, depth) {
		runs++
	}
	// one allocation each for the children, their ids and their positions
	nodes, ids, positions := make([]Node, runs), make([]string, runs), make([]int, runs)
	n.Index, n.Children = make(map[string][]int, runs), make([]*Node, runs)
	for i, k := from, 0; i < to; k++ {
		j := runEnd(items, i, to, depth)
		ids[k], positions[k] = strconv.FormatInt(items[i][depth].ID, 10), k
		nodes[k] = Node{ID: &ids[k], Type: typ, First: i, Last: j - 1, Index: map[string][]int{}, Children: []*Node{}}
		if prev, ok := n.Index[ids[k]]; ok {
			n.Index[ids[k]] = append(prev, k)
		} else {
			n.Index[ids[k]] = positions[k : k+1 : k+1]
		}
		n.Children[k] = &nodes[k]
		grow(&nodes[k], levels, items, i, j, depth+1)
		i = j
	}
}

// runEnd returns the end of the run of items from i (before to) with one element at depth.
func runEnd(items [][]elem, i, to, depth int) int {
	j := i
	for j < to && items[j][depth].ID == items[i][depth].ID {
		j++
	}
	return j
}
