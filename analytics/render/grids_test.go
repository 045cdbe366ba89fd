package render

import (
	"errors"
	"flag"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files under testdata")
	keep   = flag.String("keep", "", "write the rendered sample reports into this directory")
)

// generatedAt is the fixed generation time of the tests.
var generatedAt = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

func num(v float64) *float64 { return &v }

// rowsOf streams the given rows.
func rowsOf(rs ...grid.Row) iter.Seq2[grid.Row, error] {
	return func(yield func(grid.Row, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// failing streams the given rows, then fails.
func failing(err error, rs ...grid.Row) iter.Seq2[grid.Row, error] {
	return func(yield func(grid.Row, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
		yield(grid.Row{}, err)
	}
}

var errWarehouse = errors.New("warehouse gone")

// salesGrid is a realistic report: sales by region with three metrics.
func salesGrid() *grid.Grid {
	return &grid.Grid{
		Title:      "Sales by region",
		Format:     grid.FormatChart,
		Chart:      grid.ChartBar,
		Filters:    []string{"Year IN (2024)", "Channel = Online"},
		RowHeaders: []string{"Region"},
		RowKinds:   []string{""},
		Columns: []grid.Column{
			{Path: []string{"Revenue"}, Format: "$#,##0.00"},
			{Path: []string{"Units sold"}, Format: "#,##0"},
			{Path: []string{"Margin"}, Format: "0.0%"},
		},
		Rows: rowsOf(
			grid.Row{Headers: []string{"North America"}, Values: []*float64{num(1254300.5), num(48210), num(0.312)}},
			grid.Row{Headers: []string{"Europe"}, Values: []*float64{num(983120.25), num(39877), num(0.287)}},
			grid.Row{Headers: []string{"Asia Pacific"}, Values: []*float64{num(1402999.99), num(61004), num(0.241)}},
			grid.Row{Headers: []string{"Latin America"}, Values: []*float64{num(312450), num(12980), num(0.198)}},
			grid.Row{Headers: []string{"Middle East & Africa"}, Values: []*float64{num(198700.75), num(8450), num(-0.034)}},
			grid.Row{Headers: []string{"Žluťoučký kůň s.r.o."}, Values: []*float64{num(45210.1), nil, num(0.152)}},
		),
	}
}

// pivotGrid has two row attributes, two column header levels, Czech text,
// empty cells and negative numbers.
func pivotGrid() *grid.Grid {
	return &grid.Grid{
		Title:      "Žluťoučký kůň: revenue by year",
		Format:     grid.FormatGrid,
		RowHeaders: []string{"Region", "Product"},
		RowKinds:   []string{"", ""},
		Columns: []grid.Column{
			{Path: []string{"2024", "Revenue"}, Format: "#,##0.00"},
			{Path: []string{"2024", "Units"}, Format: "#,##0"},
			{Path: []string{"2025", "Revenue"}, Format: "#,##0.00"},
			{Path: []string{"2025", "Units"}, Format: "#,##0"},
		},
		Rows: rowsOf(
			grid.Row{Headers: []string{"Čechy", "Žluťoučký kůň"}, Values: []*float64{num(1234.5), num(10), num(-99.125), num(-3)}},
			grid.Row{Headers: []string{"Morava", `Say "hi", world`}, Values: []*float64{nil, num(0), num(0.1), nil}},
			grid.Row{Headers: []string{"Slezsko", ""}, Values: []*float64{num(1e9), num(12345678), num(-0.5), num(7)}},
		),
	}
}

// longGrid has n generated rows with two attributes and three metrics.
func longGrid(n int) *grid.Grid {
	regions := []string{"North", "South", "East", "West", "Central"}
	return &grid.Grid{
		Title:      "Orders by region and customer",
		Format:     grid.FormatGrid,
		RowHeaders: []string{"Region", "Customer"},
		RowKinds:   []string{"", ""},
		Columns: []grid.Column{
			{Path: []string{"Revenue"}, Format: "#,##0.00"},
			{Path: []string{"Orders"}, Format: "#,##0"},
			{Path: []string{"Share"}, Format: "0.0%"},
		},
		Rows: func(yield func(grid.Row, error) bool) {
			for i := range n {
				r := grid.Row{
					Headers: []string{regions[i%len(regions)], fmt.Sprintf("Customer %05d", i)},
					Values:  []*float64{num(float64(i)*13.37 - 500), num(float64(i % 97)), num(float64(i%1000) / 1000)},
				}
				if !yield(r, nil) {
					return
				}
			}
		},
	}
}

// keepFile writes a rendered sample into the -keep directory, if one is set.
func keepFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if *keep == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(*keep, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// monthlyGrid is revenue and cost by month: a date attribute, drawn as lines.
func monthlyGrid(months int) *grid.Grid {
	var rs []grid.Row
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range months {
		m := start.AddDate(0, i, 0)
		rev := 120000 + 35000*math.Sin(float64(i)/2.2) + 1800*float64(i)
		cost := 90000 + 12000*math.Cos(float64(i)/3) + 900*float64(i)
		r := grid.Row{Headers: []string{m.Format("2006-01")}, Values: []*float64{num(rev), num(cost)}}
		if i == 7 {
			r.Values[1] = nil
		}
		rs = append(rs, r)
	}
	return &grid.Grid{
		Title:      "Monthly revenue and cost",
		Format:     grid.FormatChart,
		Chart:      grid.ChartBar,
		RowHeaders: []string{"Month"},
		RowKinds:   []string{"date"},
		Columns: []grid.Column{
			{Path: []string{"Revenue"}, Format: "$#,##0.00"},
			{Path: []string{"Cost"}, Format: "$#,##0.00"},
		},
		Rows: rowsOf(rs...),
	}
}

// manyGrid has n categories with long names and one metric.
func manyGrid(n int, chart string) *grid.Grid {
	var rs []grid.Row
	for i := range n {
		rs = append(rs, grid.Row{
			Headers: []string{fmt.Sprintf("Product line %03d – Žluťoučký kůň edition", i)},
			Values:  []*float64{num(float64((i*7919)%1000) / 10000)},
		})
	}
	return &grid.Grid{
		Title:      "Share by product line",
		Format:     grid.FormatChart,
		Chart:      chart,
		RowHeaders: []string{"Product line"},
		RowKinds:   []string{""},
		Columns:    []grid.Column{{Path: []string{"Share of sales"}, Format: "0.0%"}},
		Rows:       rowsOf(rs...),
	}
}

// oneNumberGrid is a single value.
func oneNumberGrid() *grid.Grid {
	return &grid.Grid{
		Title:   "Revenue this quarter",
		Format:  grid.FormatOneNumber,
		Filters: []string{"Quarter = 2025-Q1"},
		Columns: []grid.Column{{Path: []string{"Revenue"}, Format: "$#,##0.00"}},
		Rows:    rowsOf(grid.Row{Values: []*float64{num(3812450.456)}}),
	}
}

// wideGrid has many columns, so its PDF turns landscape.
func wideGrid() *grid.Grid {
	g := &grid.Grid{Title: "Revenue by region and month", Format: grid.FormatGrid, RowHeaders: []string{"Region"}, RowKinds: []string{""}}
	for m := range 12 {
		month := time.Month(m + 1).String()
		g.Columns = append(g.Columns, grid.Column{Path: []string{month, "Revenue"}, Format: "#,##0.00"})
	}
	var rs []grid.Row
	for i, region := range []string{"North America", "Europe", "Asia Pacific", "Latin America", "Middle East & Africa – a very long region name that will not fit"} {
		r := grid.Row{Headers: []string{region}}
		for m := range 12 {
			r.Values = append(r.Values, num(float64((i+1)*(m+3))*1234.567))
		}
		rs = append(rs, r)
	}
	g.Rows = rowsOf(rs...)
	return g
}
