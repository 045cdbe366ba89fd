package xtab

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// stableOrder is the order of an axis's headers as a stable sort by level gives it.
func stableOrder(a *axis) []header {
	out := slices.Clone(a.headers)
	slices.SortStableFunc(out, func(x, y header) int {
		at := 0
		for _, l := range a.levels {
			if l.Metric {
				if c := cmp.Compare(x.metric, y.metric); c != 0 {
					return c
				}
				continue
			}
			ex, ey := a.tuples[x.tuple][at], a.tuples[y.tuple][at]
			at++
			if !l.Date {
				if c := strings.Compare(ex.Label, ey.Label); c != 0 {
					return c
				}
			}
			if c := cmp.Compare(ex.ID, ey.ID); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

func TestAxisOrder(t *testing.T) {
	// Labels shared by several elements, dates ordered by id whatever their label, the
	// metric level first, between or last.
	for _, levels := range [][]level{
		{{Attr: 0}, {Attr: 1, Date: true}, {Metric: true}},
		{{Metric: true}, {Attr: 0}, {Attr: 1, Date: true}},
		{{Attr: 1, Date: true}, {Metric: true}, {Attr: 0}},
		{{Attr: 0}, {Attr: 1, Date: true}},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		a := newAxis(levels)
		var buf []byte
		for range 500 {
			name := rng.IntN(5)
			row := []elem{
				{ID: int64(name*10 + rng.IntN(3)), Label: fmt.Sprintf("name %d", name)},
				{ID: int64(2020 + rng.IntN(6)), Label: fmt.Sprintf("year %d", rng.IntN(9))},
			}
			_, buf = a.add(row, buf)
		}
		made := &axis{levels: a.levels, tuples: a.tuples}
		for tu := range a.tuples {
			if metricLevel(levels) < 0 {
				made.headers = append(made.headers, header{tu, -1})
				continue
			}
			for m := range 3 {
				made.headers = append(made.headers, header{tu, m})
			}
		}
		a.order(3)
		if want := stableOrder(made); !slices.Equal(a.headers, want) {
			t.Errorf("levels %+v: order differs from the stable sort's", levels)
		}
		for i := 1; i < len(a.headers); i++ {
			x, y := a.headers[i-1], a.headers[i]
			if x == y {
				t.Fatalf("levels %+v: header %v twice", levels, x)
			}
		}
	}
}
