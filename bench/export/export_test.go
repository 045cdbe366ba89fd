package export

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/render"
)

var generatedAt = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

// report returns a report of n rows with two attributes and three metrics.
// The rows are made beforehand, so the benchmarks time the rendering alone.
func report(n int) *grid.Grid {
	regions := []string{"North America", "Europe", "Asia Pacific", "Latin America", "Middle East & Africa"}
	rows := make([]grid.Row, n)
	for i := range rows {
		revenue, orders, margin := float64(i)*13.37-500, float64(i%997), float64(i%1000)/1000
		rows[i] = grid.Row{
			Headers: []string{regions[i%len(regions)], fmt.Sprintf("Customer %06d – Žluťoučký kůň", i)},
			Values:  []*float64{&revenue, &orders, &margin},
		}
		if i%50 == 7 {
			rows[i].Values[1] = nil
		}
	}
	return &grid.Grid{
		Title:      "Orders by region and customer",
		Format:     grid.FormatGrid,
		Chart:      grid.ChartBar,
		Filters:    []string{"Year IN (2024)"},
		RowHeaders: []string{"Region", "Customer"},
		RowKinds:   []string{"", ""},
		Columns: []grid.Column{
			{Path: []string{"Revenue"}, Format: "$#,##0.00"},
			{Path: []string{"Orders"}, Format: "#,##0"},
			{Path: []string{"Margin"}, Format: "0.0%"},
		},
		Rows: func(yield func(grid.Row, error) bool) {
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
		},
	}
}

// bench runs one renderer b.N times and reports rows per second and the
// size of the file.
func bench(b *testing.B, rows int, render func(io.Writer, *grid.Grid) error) {
	g := report(rows)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := render(&out, g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(out.Len()), "bytes/file")
}

func BenchmarkXLSX100k(b *testing.B) {
	bench(b, 100_000, func(w io.Writer, g *grid.Grid) error { return render.XLSX(w, g, generatedAt) })
}

func BenchmarkCSV100k(b *testing.B) {
	bench(b, 100_000, render.CSV)
}

func BenchmarkPDF10k(b *testing.B) {
	bench(b, 10_000, func(w io.Writer, g *grid.Grid) error { return render.PDF(w, g, generatedAt) })
}

func BenchmarkPNGBarChart(b *testing.B) {
	bench(b, 12, render.PNG)
}
