package xtab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// odd are strings encoding/json escapes, or writes as they are.
var odd = []string{"", "12", "-3", `a"b`, `back\slash`, "<b>&amp;</b>", "tab\tnew\nline", "über", "\u2028\u2029",
	"bad \xff utf-8", "\x7f", "\x00", "Product 00042", "a<b", "x &y", "1 > 0"}

// randomXTab is a page with every kind of value: nil and empty maps and slices, and
// strings that need escaping.
func randomXTab(rng *rand.Rand) *XTab {
	str := func() string { return odd[rng.IntN(len(odd))] }
	var tree func(depth int) *Node
	tree = func(depth int) *Node {
		n := &Node{Type: str(), First: rng.IntN(100) - 50, Last: rng.IntN(1 << 20)}
		if rng.IntN(4) > 0 {
			id := str()
			n.ID = &id
		}
		if rng.IntN(4) > 0 {
			n.Index = map[string][]int{}
			for range rng.IntN(5) {
				var positions []int
				if rng.IntN(3) > 0 {
					positions = []int{}
					for range rng.IntN(3) {
						positions = append(positions, rng.IntN(10))
					}
				}
				n.Index[str()+fmt.Sprint(rng.IntN(20))] = positions
			}
		}
		if depth > 0 && rng.IntN(5) > 0 {
			n.Children = []*Node{}
			for range rng.IntN(4) {
				if rng.IntN(8) == 0 {
					n.Children = append(n.Children, nil)
				} else {
					n.Children = append(n.Children, tree(depth-1))
				}
			}
		}
		return n
	}
	headers := func() Headers {
		var h Headers
		if rng.IntN(5) > 0 {
			h.Lookups = []map[string]string{}
			for range rng.IntN(3) {
				var l map[string]string
				if rng.IntN(4) > 0 {
					l = map[string]string{}
					for range rng.IntN(6) {
						l[str()+fmt.Sprint(rng.IntN(20))] = str()
					}
				}
				h.Lookups = append(h.Lookups, l)
			}
		}
		if rng.IntN(5) > 0 {
			h.Tree = tree(4)
		}
		return h
	}
	x := &XTab{Rows: headers(), Columns: headers(), OverallSize: Size{rng.IntN(9), rng.IntN(9)},
		Offset: Size{rng.IntN(9), rng.IntN(9)}, Size: Size{rng.IntN(9), rng.IntN(9)}}
	if rng.IntN(5) > 0 {
		x.Data = [][]*string{}
		for range rng.IntN(5) {
			var row []*string
			if rng.IntN(5) > 0 {
				row = []*string{}
				for range rng.IntN(4) {
					if rng.IntN(3) == 0 {
						row = append(row, nil)
					} else {
						s := str()
						row = append(row, &s)
					}
				}
			}
			x.Data = append(x.Data, row)
		}
	}
	return x
}

func TestAppendJSONIsEncodingJSONs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		x := randomXTab(rng)
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.AppendJSON([]byte("prefix")); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("page %d:\n got %s\nwant prefix%s", i, got, want)
		}
	}
	if got := (*XTab)(nil).AppendJSON(nil); string(got) != "null" {
		t.Errorf("nil page: %s", got)
	}
}

func TestAppendJSONOfAPage(t *testing.T) {
	t.Parallel()
	p, f := salesByRegionAndProduct(3, 7)
	tb, err := pivot(p, f)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/r.xtab"
	if err := tb.write(path); err != nil {
		t.Fatal(err)
	}
	x, err := readPage(path, p, Page{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if got := x.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// growByOne is how header trees were grown, a node at a time: the reference for grow.
func growByOne(n *Node, levels []level, items [][]elem, from, to, depth int) {
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
		growByOne(child, levels, items, i, j, depth+1)
		i = j
	}
}

func TestHeadersOf(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	levels := []level{{Attr: 0}, {Metric: true}, {Attr: 1}}
	for _, n := range []int{0, 1, 2, 50, 300} {
		// few ids, so that an id comes back after another one under the same parent
		items := make([][]elem, n)
		for i := range items {
			items[i] = []elem{{ID: int64(rng.IntN(3)), Label: odd[rng.IntN(2)]}, {ID: int64(rng.IntN(2)), Label: "M"}, {ID: int64(rng.IntN(4) - 2), Label: fmt.Sprint(rng.IntN(2))}}
		}
		got := headersOf(levels, items)
		want := Headers{Lookups: []map[string]string{{}, {}, {}}}
		for _, it := range items {
			for i, e := range it {
				want.Lookups[i][strconv.FormatInt(e.ID, 10)] = e.Label
			}
		}
		want.Tree = &Node{Type: "root", First: 0, Last: n - 1, Index: map[string][]int{}, Children: []*Node{}}
		growByOne(want.Tree, levels, items, 0, n, 0)
		g, w := (&XTab{Rows: got}).AppendJSON(nil), (&XTab{Rows: want}).AppendJSON(nil)
		if !bytes.Equal(g, w) {
			t.Fatalf("%d items:\n got %s\nwant %s", n, g, w)
		}
		if n == 300 && !bytes.Contains(g, []byte(`":[0,2`)) {
			t.Errorf("no id came back after another one: %s", g)
		}
	}
}
