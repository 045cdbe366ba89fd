package xtab

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomAxis is an axis of an attribute, the metrics and a date, over n
// tuples drawn at random, some elements sharing a label.
func randomAxis(r *rand.Rand, n, metrics int) *axis {
	a := newAxis([]level{{Attr: 0}, {Metric: true}, {Attr: 1, Date: true}}, n)
	for range n {
		region, day := r.Int64N(50), r.Int64N(400)
		a.add([]elem{{ID: region, Label: fmt.Sprintf("Region %d", region%7)}, {ID: day, Label: "d"}})
	}
	for t := range a.tuples {
		for m := range metrics {
			a.headers = append(a.headers, header{t, m})
		}
	}
	r.Shuffle(len(a.headers), func(i, j int) { a.headers[i], a.headers[j] = a.headers[j], a.headers[i] })
	return a
}

func TestSortByKeysSortsAsTheRanks(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, metrics := range []int{0, 1, 3} {
		a := randomAxis(r, 2_000, max(metrics, 1))
		rank, sizes := a.ranks()
		want := slices.Clone(a.headers)
		byRanks := &axis{levels: a.levels, attrs: a.attrs, headers: want}
		byRanks.sortByRanks(rank)
		if !a.sortByKeys(rank, sizes, metrics) {
			t.Fatalf("%d metrics: sortByKeys refused %d tuples", metrics, len(a.tuples))
		}
		if !slices.Equal(a.headers, want) {
			t.Errorf("%d metrics: sortByKeys and sortByRanks order the headers differently", metrics)
		}
	}
}

func TestSortByKeysRefusesKeysBeyond64Bits(t *testing.T) {
	t.Parallel()
	levels := make([]level, 5)
	for i := range levels {
		levels[i] = level{Attr: i}
	}
	a := newAxis(levels, 1)
	a.add(make([]elem, 5))
	a.headers = []header{{0, -1}}
	sizes := slices.Repeat([]int{math.MaxUint16 + 1}, 5) // 2^80 headers
	if a.sortByKeys(make([]int, 5), sizes, 0) {
		t.Error("sortByKeys numbered headers whose numbers need 80 bits")
	}
}

func TestCellsFindEveryFlatRow(t *testing.T) {
	t.Parallel()
	const rows, cols = 30, 20 // 600 pairs
	for _, tc := range []struct {
		cells int
		dense bool
	}{
		{150, true},  // 600 ≤ 4×150 + 64
		{100, false}, // 600 > 4×100 + 64
	} {
		r := rand.New(rand.NewPCG(3, uint64(tc.cells)))
		var at [][2]int
		flatRow := map[[2]int]int{}
		for len(at) < tc.cells {
			rc := [2]int{r.IntN(rows), r.IntN(cols)}
			if _, ok := flatRow[rc]; !ok {
				flatRow[rc] = len(at)
				at = append(at, rc)
			}
		}
		x := newCells(rows, cols, at)
		if dense := x.sparse == nil; dense != tc.dense {
			t.Errorf("%d cells among %d pairs: dense %v, want %v", tc.cells, rows*cols, dense, tc.dense)
		}
		for i := range rows {
			for j := range cols {
				got, ok := x.at(i, j)
				want, present := flatRow[[2]int{i, j}]
				if ok != present || ok && got != want {
					t.Fatalf("%d cells: at(%d, %d) = %d, %v; want %d, %v", tc.cells, i, j, got, ok, want, present)
				}
			}
		}
	}
}
