package main

import (
	"fmt"
	"io"
	"slices"
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

// report returns, in memory, the report the whole path exports over a
// project of customers customers with perCustomer sales each (writeData):
// the regions and customers by the three metrics, or, for a chart, the
// regions alone; the same title, headers, formats and values, which the
// generated sales add up to, so that the renderer alone writes the content
// the whole path does. The rows are made beforehand, so the benchmarks time
// the rendering alone.
func report(customers, perCustomer int, chart bool) *grid.Grid {
	type sums struct{ amount, cost, orders int }
	byCustomer := make([]sums, customers)
	byRegion := make([]sums, len(regions))
	for i := range customers {
		for s := range perCustomer {
			amount, cost := sale(i, s)
			for _, t := range []*sums{&byCustomer[i], &byRegion[i%len(regions)]} {
				t.amount, t.cost, t.orders = t.amount+amount, t.cost+cost, t.orders+1
			}
		}
	}
	row := func(t sums, headers ...string) grid.Row {
		revenue, orders := float64(t.amount)/100, float64(t.orders)
		margin := 1 - float64(t.cost)/float64(t.amount)
		return grid.Row{Headers: headers, Values: []*float64{&revenue, &orders, &margin}}
	}
	var rows []grid.Row
	for _, name := range slices.Sorted(slices.Values(regions)) { // by name, as the report has them
		r := slices.Index(regions, name)
		if chart {
			rows = append(rows, row(byRegion[r], regions[r]))
			continue
		}
		for i := r; i < customers; i += len(regions) {
			rows = append(rows, row(byCustomer[i], regions[r], customerName(i)))
		}
	}
	g := &grid.Grid{
		Title:      "Orders by region and customer",
		Format:     grid.FormatGrid,
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
	if chart {
		g.Title, g.Format, g.Chart, g.RowHeaders, g.RowKinds = "Orders by region", grid.FormatChart, grid.ChartBar, g.RowHeaders[:1],
			g.RowKinds[:1]
	}
	return g
}

// sale returns the amount and the cost, in cents, of sale s of customer i,
// as writeData writes them.
func sale(i, s int) (amount, cost int) {
	amount = 100 + (i*7919+s*104729)%1_000_000
	return amount, amount * (300 + (i+s)%600) / 1000
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
