package xtab

import (
	"fmt"
	"path/filepath"
	"testing"
)

// salesByRegionAndProduct is the report of bench/execute: regions then products in
// rows, one metric in columns, every combination present, in no particular order.
func salesByRegionAndProduct(regions, products int) (*plan, *flat) {
	p := &plan{
		Rows:    []level{{Attr: 0, Title: "Region"}, {Attr: 1, Title: "Product"}},
		Columns: []level{{Metric: true}},
		Metrics: []Metric{{Title: "Revenue", Format: "#,##0.00"}},
	}
	f := &flat{}
	n := regions * products
	for i := range n {
		j := i * 7919 % n // a prime: each combination once, shuffled
		r, pr := j/products+1, j%products+1
		f.attrs = append(f.attrs, []elem{{ID: int64(r), Label: fmt.Sprintf("Region %03d", r)}, {ID: int64(pr), Label: fmt.Sprintf("Product %05d", pr)}})
		f.values, f.valid = append(f.values, []float64{float64(i) * 1.25}), append(f.valid, []bool{true})
	}
	return p, f
}

func BenchmarkPivotAndWrite(b *testing.B) {
	p, f := salesByRegionAndProduct(20, 500)
	path := filepath.Join(b.TempDir(), "r.xtab")
	for b.Loop() {
		t, err := pivot(p, f)
		if err != nil {
			b.Fatal(err)
		}
		if err := t.write(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPageJSON(b *testing.B) {
	p, f := salesByRegionAndProduct(20, 500)
	path := filepath.Join(b.TempDir(), "r.xtab")
	t, err := pivot(p, f)
	if err != nil {
		b.Fatal(err)
	}
	if err := t.write(path); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		x, err := readPage(path, p, Page{})
		if err != nil {
			b.Fatal(err)
		}
		x.AppendJSON(nil)
	}
}
