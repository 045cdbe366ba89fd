package main

import (
	"fmt"
	"io"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/render"
)

var generatedAt = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

// regions are the values of the first row attribute, in the in-memory report
// and in the generated data alike.
var regions = []string{"North America", "Europe", "Asia Pacific", "Latin America", "Middle East & Africa"}

// customerName is the label of customer i, in the in-memory report and in the
// generated data alike: long, and not all ASCII.
func customerName(i int) string { return fmt.Sprintf("Customer %06d – Žluťoučký kůň", i) }

// report returns a report of n rows with two attributes and three metrics.
// The rows are made beforehand, so the benchmarks time the rendering alone.
func report(n int) *grid.Grid {
	rows := make([]grid.Row, n)
	for i := range rows {
		revenue, orders, margin := float64(i)*13.37-500, float64(i%997), float64(i%1000)/1000
		rows[i] = grid.Row{
			Headers: []string{regions[i%len(regions)], customerName(i)},
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

// renderTo renders g in one of the render.Format* formats, as the exporter
// does.
func renderTo(w io.Writer, format string, g *grid.Grid) error {
	switch format {
	case render.FormatCSV:
		return render.CSV(w, g)
	case render.FormatXLS:
		return render.XLSX(w, g, generatedAt)
	case render.FormatPDF:
		return render.PDF(w, g, generatedAt)
	case render.FormatPNG:
		return render.PNG(w, g)
	}
	return fmt.Errorf("unknown format %q", format)
}
