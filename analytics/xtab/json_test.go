package xtab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
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
