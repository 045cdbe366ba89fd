package xtab

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/grid"
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

// BenchmarkPivotAndWrite pivots the results of bench/execute (20 regions
// by 500 products) and of bench/export (5 regions by 20,000 customers each)
// and writes them into a result file.
func BenchmarkPivotAndWrite(b *testing.B) {
	for _, size := range []struct{ regions, products int }{{20, 500}, {5, 20_000}} {
		p, f := salesByRegionAndProduct(size.regions, size.products)
		path := filepath.Join(b.TempDir(), "r.xtab")
		b.Run(fmt.Sprintf("rows=%d", len(f.attrs)), func(b *testing.B) {
			for b.Loop() {
				t, err := pivot(p, f)
				if err != nil {
					b.Fatal(err)
				}
				if err := t.write(path); err != nil {
					b.Fatal(err)
				}
			}
		})
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

// BenchmarkOneNumber computes a one-number metric and reads its value, as
// the engine evaluates a condition's metric: executed (a result kept, its
// file written and read back) and evaluated in memory. Each time it is a
// plan of its own (a filter on a value no region has), so that no execution
// shares another's result.
func BenchmarkOneNumber(b *testing.B) {
	e := newEnv(b, Config{})
	label := uriOf(b, e, "label.regions.name")
	i := 0
	next := func() Source {
		i++
		def := &analytics.ReportDefinitionContent{Format: grid.FormatOneNumber, Grid: analytics.Grid{
			Rows: []analytics.GridItem{}, Columns: []analytics.GridItem{{MetricGroup: true}},
			Metrics: []analytics.GridMetric{{URI: e.demo.Metrics["metric.revenue"]}}},
			Filters: []analytics.Filter{{Expression: "[" + label + `] <> "none ` + strconv.Itoa(i) + `"`}}}
		return Source{Content: def, Slice: &analytics.Slice{}}
	}
	value := func(g *grid.Grid, err error) {
		if err != nil {
			b.Fatal(err)
		}
		for row, err := range g.Rows {
			if err != nil || len(row.Values) != 1 || row.Values[0] == nil {
				b.Fatalf("row %+v, %v", row, err)
			}
			break
		}
	}
	ctx := context.Background()
	b.Run("execute", func(b *testing.B) {
		for b.Loop() {
			res, err := e.ex.Execute(ctx, e.pid, "u", next())
			if err != nil {
				b.Fatal(err)
			}
			value(e.ex.ResultGrid(ctx, e.pid, res.DataID))
		}
	})
	b.Run("evaluate", func(b *testing.B) {
		for b.Loop() {
			value(e.ex.Evaluate(ctx, e.pid, "u", next()))
		}
	})
}
