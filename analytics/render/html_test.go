package render

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
)

func htmlOf(t *testing.T, g *grid.Grid, rows int) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, g, rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLShowsTheTableInFormat(t *testing.T) {
	t.Parallel()
	out := htmlOf(t, salesGrid(), 50)
	for _, want := range []string{
		">Sales by region</h2>",
		"Filters: Year IN (2024); Channel = Online",
		ChartSlot, // a chart report leaves room for its image
		">North America</td>",
		">$1,254,300.50</td>",
		">48,210</td>",
		">-3.4%</td>",
		">Middle East &amp; Africa</td>", // escaped
		">Žluťoučký kůň s.r.o.</td>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(out, "more row") {
		t.Errorf("every row shown, yet it says there are more")
	}
	if strings.Contains(htmlOf(t, pivotGrid(), 50), ChartSlot) {
		t.Errorf("a grid report has a chart slot")
	}
}

func TestHTMLHeaderLevelsSpanTheirColumns(t *testing.T) {
	t.Parallel()
	out := htmlOf(t, pivotGrid(), 50)
	if strings.Count(out, `<th colspan="2"`) != 2 || !strings.Contains(out, ">2024</th>") || !strings.Contains(out, ">2025</th>") {
		t.Errorf("the year level does not span its two metrics:\n%s", out)
	}
	if !strings.Contains(out, ">Say &#34;hi&#34;, world</td>") {
		t.Errorf("quotes not escaped")
	}
}

func TestHTMLStopsAtMaxRowsAndSaysHowManyMore(t *testing.T) {
	t.Parallel()
	out := htmlOf(t, longGrid(1234), 50)
	if n := strings.Count(out, "<tr"); n != 51 { // the header and 50 rows
		t.Errorf("%d table rows, want 51", n)
	}
	if !strings.Contains(out, "and 1,184 more rows in the attached file") {
		t.Errorf("no note of the rows left out")
	}
	out = htmlOf(t, longGrid(51), 50)
	if !strings.Contains(out, "and 1 more row in the attached file") {
		t.Errorf("one row left out: no singular note")
	}
}

func TestHTMLEscapesEveryText(t *testing.T) {
	t.Parallel()
	g := &grid.Grid{Title: `<script>alert(1)</script>`, Format: grid.FormatGrid, RowHeaders: []string{`<img src=x onerror=y>`},
		Filters: []string{`a</p><b>`},
		Columns: []grid.Column{{Path: []string{`"><i>`}, Format: `"<b>"0`}},
		Rows:    rowsOf(grid.Row{Headers: []string{`</td><script>`}, Values: []*float64{num(1)}})}
	out := htmlOf(t, g, 50)
	for _, bad := range []string{"<script", "<img", "<i>", "<b>", "</p><b>"} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped %q in:\n%s", bad, out)
		}
	}
}

func TestHTMLOneNumberAndNoData(t *testing.T) {
	t.Parallel()
	out := htmlOf(t, oneNumberGrid(), 50)
	if !strings.Contains(out, ">$3,812,450.46</p>") || strings.Contains(out, "<table") {
		t.Errorf("one number:\n%s", out)
	}
	empty := pivotGrid()
	empty.Rows = rowsOf()
	if !strings.Contains(htmlOf(t, empty, 50), "No data.") {
		t.Errorf("an empty table does not say so")
	}
	bad := pivotGrid()
	bad.Rows = failing(errWarehouse)
	if err := HTML(discard{}, bad, 50); !errors.Is(err, errWarehouse) {
		t.Errorf("a failing read gives %v", err)
	}
}

func TestHTMLColoursNumbersAsTheirFormatSays(t *testing.T) {
	t.Parallel()
	g := &grid.Grid{Title: "P&L", Format: grid.FormatGrid, RowHeaders: []string{"Unit"},
		Columns: []grid.Column{{Path: []string{"Profit"}, Format: "[Blue]#,##0;[Red]-#,##0"}},
		Rows: rowsOf(grid.Row{Headers: []string{"A"}, Values: []*float64{num(5)}},
			grid.Row{Headers: []string{"B"}, Values: []*float64{num(-5)}})}
	out := htmlOf(t, g, 50)
	blue := strings.Index(out, ">5</td>")
	red := strings.Index(out, ">-5</td>")
	if blue < 0 || red < 0 {
		t.Fatalf("values missing:\n%s", out)
	}
	if !strings.Contains(out[blue-40:blue], "color:#0000ff") || !strings.Contains(out[red-40:red], "color:#ff0000") {
		t.Errorf("colours not applied:\n%s", out)
	}
}
