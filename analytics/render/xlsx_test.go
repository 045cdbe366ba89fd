package render

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/heraldhq/herald/analytics/grid"
)

// openXLSX renders g and opens the workbook, returning it with its sheet.
func openXLSX(t *testing.T, g *grid.Grid) (*excelize.File, string) {
	t.Helper()
	var b bytes.Buffer
	if err := XLSX(&b, g, generatedAt); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatalf("open workbook: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	sheets := f.GetSheetList()
	if len(sheets) != 1 {
		t.Fatalf("sheets = %q, want one", sheets)
	}
	return f, sheets[0]
}

func cellValue(t *testing.T, f *excelize.File, sheet, cell string, raw bool) string {
	t.Helper()
	v, err := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: raw})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestXLSXLayout(t *testing.T) {
	t.Parallel()
	f, sheet := openXLSX(t, salesGrid())
	if sheet != "Sales by region" {
		t.Errorf("sheet = %q, want the title", sheet)
	}
	want := map[string]string{
		"A1": "Sales by region",
		"A2": "Generated 2025-03-14 09:30 UTC",
		"A3": "Filters: Year IN (2024); Channel = Online",
		"A4": "",
		"A5": "Region", "B5": "Revenue", "C5": "Units sold", "D5": "Margin",
		"A6":  "North America",
		"A11": "Žluťoučký kůň s.r.o.",
	}
	for cell, w := range want {
		if got := cellValue(t, f, sheet, cell, false); got != w {
			t.Errorf("%s = %q, want %q", cell, got, w)
		}
	}
	panes, err := f.GetPanes(sheet)
	if err != nil {
		t.Fatal(err)
	}
	if !panes.Freeze || panes.YSplit != 5 || panes.TopLeftCell != "A6" {
		t.Errorf("panes = %+v, want frozen below row 5", panes)
	}
	for _, cell := range []string{"A1", "A5", "D5"} {
		if !bold(t, f, sheet, cell) {
			t.Errorf("%s is not bold", cell)
		}
	}
	if w, _ := f.GetColWidth(sheet, "A"); w < float64(len("Middle East & Africa")) {
		t.Errorf("column A is %v wide, narrower than its longest value", w)
	}
}

func bold(t *testing.T, f *excelize.File, sheet, cell string) bool {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	return st.Font != nil && st.Font.Bold
}

func TestXLSXNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cell      string
		raw       float64
		format    string
		formatted string
	}{
		{"B6", 1254300.5, "$#,##0.00", "$1,254,300.50"},
		{"C6", 48210, "#,##0", "48,210"},
		{"D6", 0.312, "0.0%", "31.2%"},
		{"D10", -0.034, "0.0%", "-3.4%"},
		{"B11", 45210.1, "$#,##0.00", "$45,210.10"},
	}
	f, sheet := openXLSX(t, salesGrid())
	for _, tt := range tests {
		t.Run(tt.cell, func(t *testing.T) {
			typ, err := f.GetCellType(sheet, tt.cell)
			if err != nil {
				t.Fatal(err)
			}
			if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
				t.Errorf("cell type = %v, want a number", typ)
			}
			raw := cellValue(t, f, sheet, tt.cell, true)
			if v, err := strconv.ParseFloat(raw, 64); err != nil || v != tt.raw {
				t.Errorf("raw value = %q, want %v", raw, tt.raw)
			}
			id, err := f.GetCellStyle(sheet, tt.cell)
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.GetStyle(id)
			if err != nil {
				t.Fatal(err)
			}
			if st.CustomNumFmt == nil || *st.CustomNumFmt != tt.format {
				t.Errorf("number format = %v, want %q", st.CustomNumFmt, tt.format)
			}
			if got := cellValue(t, f, sheet, tt.cell, false); got != tt.formatted {
				t.Errorf("shown as %q, want %q", got, tt.formatted)
			}
		})
	}
	if got := cellValue(t, f, sheet, "C11", true); got != "" {
		t.Errorf("empty cell C11 = %q", got)
	}
	if typ, _ := f.GetCellType(sheet, "A6"); typ != excelize.CellTypeInlineString {
		t.Errorf("attribute cell type = %v, want a string", typ)
	}
}

func TestXLSXMultiLevelHeader(t *testing.T) {
	t.Parallel()
	f, sheet := openXLSX(t, pivotGrid())
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	// Title, Generated, blank, two header rows; no filters.
	if got := strings.Join(rows[3], "|"); got != "||2024||2025" {
		t.Errorf("outer header = %q", got)
	}
	if got := strings.Join(rows[4], "|"); got != "Region|Product|Revenue|Units|Revenue|Units" {
		t.Errorf("inner header = %q", got)
	}
	if got := strings.Join(rows[5], "|"); got != "Čechy|Žluťoučký kůň|1,234.50|10|-99.13|-3" {
		t.Errorf("first row = %q", got)
	}
	merged, err := f.GetMergeCells(sheet)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, m := range merged {
		refs = append(refs, m.GetStartAxis()+":"+m.GetEndAxis())
	}
	if got := strings.Join(refs, ","); got != "C4:D4,E4:F4" {
		t.Errorf("merged = %q, want C4:D4,E4:F4", got)
	}
	if panes, _ := f.GetPanes(sheet); panes.YSplit != 5 {
		t.Errorf("frozen rows = %d, want 5", panes.YSplit)
	}
}

func TestXLSXRows(t *testing.T) {
	t.Parallel()
	t.Run("no rows", func(t *testing.T) {
		f, sheet := openXLSX(t, longGrid(0))
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 || strings.Join(rows[3], "|") != "Region|Customer|Revenue|Orders|Share" {
			t.Errorf("rows = %q, want the header only", rows)
		}
	})
	t.Run("producer reuses slices", func(t *testing.T) {
		f, sheet := openXLSX(t, reusing(450))
		for _, i := range []int{0, 1, 199, 200, 449} {
			cell := "B" + strconv.Itoa(5+i)
			want := "Customer " + strings.Repeat("0", 5-len(strconv.Itoa(i))) + strconv.Itoa(i)
			if got := cellValue(t, f, sheet, cell, false); got != want {
				t.Errorf("%s = %q, want %q", cell, got, want)
			}
		}
	})
	t.Run("rows fail", func(t *testing.T) {
		g := salesGrid()
		g.Rows = failing(errWarehouse)
		if err := XLSX(&bytes.Buffer{}, g, generatedAt); !errors.Is(err, errWarehouse) {
			t.Errorf("err = %v, want %v", err, errWarehouse)
		}
	})
}

func TestSheetName(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, title, want string }{
		{"plain", "Sales", "Sales"},
		{"forbidden characters", "Q1/Q2: [draft]?", "Q1 Q2   draft"},
		{"long", strings.Repeat("Žluťoučký ", 5), "Žluťoučký Žluťoučký Žluťoučký Ž"},
		{"empty", "", "Report"},
		{"only quotes", "''", "Report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sheetName(tt.title); got != tt.want {
				t.Errorf("sheetName(%q) = %q, want %q", tt.title, got, tt.want)
			}
		})
	}
}
