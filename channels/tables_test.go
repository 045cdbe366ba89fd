package channels_test

import (
	"bytes"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/channels"
)

func num(v float64) *float64 { return &v }

func rows(rs ...grid.Row) iter.Seq2[grid.Row, error] {
	return func(yield func(grid.Row, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// fragment is what the engine puts in a message's HTML for a report.
func fragment(t *testing.T, g *grid.Grid, max int) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.HTML(&b, g, max); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTablesReadTheReportsOfAMessage: the tables of the reports the engine
// lays out in a message's HTML (render.HTML's fragments after the message)
// come back with their titles, column names (pivoted levels joined), cells
// in their number formats, unescaped, and the count of rows left out; a
// one-number report and the message's own text have none.
func TestTablesReadTheReportsOfAMessage(t *testing.T) {
	t.Parallel()
	regions := &grid.Grid{Title: "Revenue by region", Format: grid.FormatChart, Chart: grid.ChartBar,
		Filters: []string{"Year IN (2026)"}, RowHeaders: []string{"Region"},
		Columns: []grid.Column{{Path: []string{"Revenue"}, Format: "$#,##0.00"}},
		Rows: rows(grid.Row{Headers: []string{"Middle East & Africa"}, Values: []*float64{num(198700.75)}},
			grid.Row{Headers: []string{"<Europe>"}, Values: []*float64{nil}})}
	pivot := &grid.Grid{Title: "By year", Format: grid.FormatGrid, RowHeaders: []string{"Region", "Product"},
		Columns: []grid.Column{{Path: []string{"2025", "Revenue"}, Format: "#,##0"}, {Path: []string{"2025", "Units"}, Format: "0"},
			{Path: []string{"2026", "Revenue"}, Format: "#,##0"}},
		Rows: rows(grid.Row{Headers: []string{"Čechy", "Kůň"}, Values: []*float64{num(1234), num(3), num(-5)}})}
	long := &grid.Grid{Title: "Orders", Format: grid.FormatGrid, RowHeaders: []string{"Customer"},
		Columns: []grid.Column{{Path: []string{"Orders"}, Format: "#,##0"}},
		Rows: func(yield func(grid.Row, error) bool) {
			for i := range 1234 {
				if !yield(grid.Row{Headers: []string{fmt.Sprint("C", i)}, Values: []*float64{num(float64(i))}}, nil) {
					return
				}
			}
		}}
	one := &grid.Grid{Title: "Total", Format: grid.FormatOneNumber, Columns: []grid.Column{{Path: []string{"Revenue"}, Format: "#,##0"}},
		Rows: rows(grid.Row{Values: []*float64{num(5)}})}
	body := channels.TextHTML("Revenue so far: 12.00\n\n<h2>not a report</h2>") +
		fragment(t, regions, 50) + fragment(t, one, 50) + fragment(t, pivot, 50) + fragment(t, long, 50)

	got := channels.Tables(body)
	want := []channels.Table{
		{Title: "Revenue by region", Columns: []channels.Column{{Name: "Region"}, {Name: "Revenue", Number: true}},
			Rows: [][]string{{"Middle East & Africa", "$198,700.75"}, {"<Europe>", ""}}},
		{Title: "By year", Columns: []channels.Column{{Name: "Region"}, {Name: "Product"}, {Name: "2025 / Revenue", Number: true},
			{Name: "2025 / Units", Number: true}, {Name: "2026 / Revenue", Number: true}},
			Rows: [][]string{{"Čechy", "Kůň", "1,234", "3", "-5"}}},
	}
	if len(got) != 3 {
		t.Fatalf("Tables = %d tables, want 3: %+v", len(got), got)
	}
	for i, w := range want {
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("table %d = %+v\nwant %+v", i, got[i], w)
		}
	}
	if o := got[2]; o.Title != "Orders" || len(o.Rows) != 50 || o.More != 1184 || o.Rows[49][0] != "C49" {
		t.Errorf("the long table = %q, %d rows, %d more", o.Title, len(o.Rows), o.More)
	}
	if got := channels.Tables(channels.TextHTML("just text")); got != nil {
		t.Errorf("a message without reports has tables: %+v", got)
	}
}

// TestTablesKeepTheirBounds: a table past MaxTableRows counts the rest in
// More, and no more than MaxTables tables are read.
func TestTablesKeepTheirBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for range channels.MaxTables + 5 {
		b.WriteString(`<div><h2>T</h2><table><tr><th>A</th></tr>`)
		for i := range channels.MaxTableRows + 7 {
			fmt.Fprintf(&b, "<tr><td>%d</td></tr>", i)
		}
		b.WriteString(`</table><p>and 3 more rows in the attached file</p></div>`)
	}
	got := channels.Tables(b.String())
	if len(got) != channels.MaxTables {
		t.Fatalf("%d tables, want %d", len(got), channels.MaxTables)
	}
	if len(got[0].Rows) != channels.MaxTableRows || got[0].More != 10 {
		t.Fatalf("%d rows and %d more, want %d and 10", len(got[0].Rows), got[0].More, channels.MaxTableRows)
	}
}

// FuzzTables: any HTML reads without a panic and within the bounds.
func FuzzTables(f *testing.F) {
	f.Add(`<div><h2>T</h2><table><tr><th colspan="3">A</th></tr><tr><td>1</td></tr></table><p>and 1,2 more rows in the attached file</p></div>`)
	f.Add(`<div><h2>x</h2><div><table><tr><td colspan="99999999999">1</td></tr></table></div></div>`)
	f.Add(`<div><h2></h2></div><table>`)
	f.Fuzz(func(t *testing.T, s string) {
		got := channels.Tables(s)
		if len(got) > channels.MaxTables {
			t.Fatalf("%d tables", len(got))
		}
		for _, tb := range got {
			if len(tb.Rows) > channels.MaxTableRows || tb.More < 0 || len(tb.Columns) > channels.MaxTableColumns {
				t.Fatalf("%d rows, %d more, %d columns", len(tb.Rows), tb.More, len(tb.Columns))
			}
			for _, r := range tb.Rows {
				if len(r) > channels.MaxTableColumns {
					t.Fatalf("a row of %d cells", len(r))
				}
			}
		}
	})
}
