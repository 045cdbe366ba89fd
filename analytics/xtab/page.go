package xtab

import (
	"errors"
	"fmt"
	"io"
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
	for _, it := range items {
		for i, e := range it {
			h.Lookups[i][strconv.FormatInt(e.ID, 10)] = e.Label
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
	for i := from; i < to; {
		j := i
		for j < to && items[j][depth].ID == items[i][depth].ID {
			j++
		}
		id := strconv.FormatInt(items[i][depth].ID, 10)
		child := &Node{ID: &id, Type: typ, First: i, Last: j - 1, Index: map[string][]int{}, Children: []*Node{}}
		n.Index[id] = append(n.Index[id], len(n.Children))
		n.Children = append(n.Children, child)
		grow(child, levels, items, i, j, depth+1)
		i = j
	}
}
