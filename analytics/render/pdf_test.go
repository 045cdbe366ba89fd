package render

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
)

func renderPDF(t *testing.T, g *grid.Grid) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := PDF(&b, g, generatedAt); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("%PDF-")) {
		t.Fatalf("output starts with %q, not %%PDF-", b.Bytes()[:min(8, b.Len())])
	}
	return b.Bytes()
}

var pageObject = regexp.MustCompile(`/Type /Page\b[^s]`)

// pageCount counts the page objects of a PDF.
func pageCount(pdf []byte) int { return len(pageObject.FindAll(pdf, -1)) }

// pdfText extracts the text of each page with pdftotext -layout, skipping
// the calling test when pdftotext is not installed, except in CI, which
// installs it.
func pdfText(t *testing.T, pdf []byte) []string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext not on PATH: .ci/run installs Debian's poppler-utils")
		}
		t.Skip("pdftotext not on PATH (apt-get install poppler-utils)")
	}
	cmd := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	pages := strings.Split(string(out), "\f")
	return pages[:len(pages)-1] // the text ends with a form feed
}

func TestPDFSales(t *testing.T) {
	t.Parallel()
	pdf := renderPDF(t, salesGrid())
	if n := pageCount(pdf); n != 1 {
		t.Errorf("pages = %d, want 1", n)
	}
	t.Run("text", func(t *testing.T) {
		text := pdfText(t, pdf)[0]
		for _, want := range []string{
			"Sales by region",
			"Filters: Year IN (2024); Channel = Online",
			"Generated 2025-03-14 09:30 UTC",
			"Region", "Revenue", "Units sold", "Margin",
			"North America", "$1,254,300.50", "48,210", "31.2%",
			"Middle East & Africa", "-3.4%",
			"Žluťoučký kůň s.r.o.", "$45,210.10",
			"Page 1 of 1",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
	})
}

func TestPDFPages(t *testing.T) {
	t.Parallel()
	pdf := renderPDF(t, longGrid(500))
	n := pageCount(pdf)
	if n < 5 {
		t.Fatalf("500 rows on %d pages, want several", n)
	}
	t.Run("text", func(t *testing.T) {
		pages := pdfText(t, pdf)
		if len(pages) != n {
			t.Fatalf("pdftotext found %d pages, the page objects %d", len(pages), n)
		}
		header := regexp.MustCompile(`Region\s+Customer\s+Revenue\s+Orders\s+Share`)
		rows := 0
		for i, p := range pages {
			if !header.MatchString(p) {
				t.Errorf("page %d has no table header:\n%s", i+1, p)
			}
			if want := fmt.Sprintf("Page %d of %d", i+1, n); !strings.Contains(p, want) {
				t.Errorf("page %d lacks %q", i+1, want)
			}
			rows += strings.Count(p, "Customer 0")
		}
		if rows != 500 {
			t.Errorf("%d rows printed, want 500", rows)
		}
		last := pages[n-1]
		if !strings.Contains(last, "Customer 00499") || !strings.Contains(last, "6,171.63") {
			t.Errorf("last page lacks the last row:\n%s", last)
		}
	})
}

func TestPDFMultiLevelHeader(t *testing.T) {
	t.Parallel()
	pdf := renderPDF(t, pivotGrid())
	t.Run("text", func(t *testing.T) {
		text := pdfText(t, pdf)[0]
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`2024\s+2025`),
			regexp.MustCompile(`Region\s+Product\s+Revenue\s+Units\s+Revenue\s+Units`),
			regexp.MustCompile(`Čechy\s+Žluťoučký kůň\s+1,234.50\s+10\s+-99.13\s+-3`),
			regexp.MustCompile(`Morava\s+Say "hi", world\s+0\s+0.10\n`),
		} {
			if !want.MatchString(text) {
				t.Errorf("text does not match %s:\n%s", want, text)
			}
		}
	})
}

func TestPDFWide(t *testing.T) {
	t.Parallel()
	pdf := renderPDF(t, wideGrid())
	if !bytes.Contains(pdf, []byte("/MediaBox [0 0 841.89 595.28]")) {
		t.Error("a table of 13 columns is not on a landscape page")
	}
	t.Run("text", func(t *testing.T) {
		text := pdfText(t, pdf)[0]
		if !regexp.MustCompile(`Middle East & Africa – a very long [a-z ]+…\s+18,518.51`).MatchString(text) {
			t.Errorf("the long region is not cut with an ellipsis:\n%s", text)
		}
		if strings.Contains(text, "will not fit") {
			t.Error("the long region is printed whole, past its column")
		}
		for _, want := range []string{"January", "September", "December", "86,419.69"} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q", want)
			}
		}
	})
}

func TestPDFOneNumber(t *testing.T) {
	t.Parallel()
	pdf := renderPDF(t, oneNumberGrid())
	t.Run("text", func(t *testing.T) {
		text := pdfText(t, pdf)[0]
		for _, want := range []string{"Revenue this quarter", "Filters: Quarter = 2025-Q1", "$3,812,450.46", "Revenue"} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
	})
}

func TestPDFNoRows(t *testing.T) {
	t.Parallel()
	pdf := renderPDF(t, longGrid(0))
	if n := pageCount(pdf); n != 1 {
		t.Errorf("pages = %d, want 1", n)
	}
	t.Run("text", func(t *testing.T) {
		text := pdfText(t, pdf)[0]
		if !strings.Contains(text, "No data") || !strings.Contains(text, "Customer") {
			t.Errorf("text lacks the header or No data:\n%s", text)
		}
	})
}

func TestPDFRowsFail(t *testing.T) {
	t.Parallel()
	for _, format := range []string{grid.FormatGrid, grid.FormatOneNumber} {
		t.Run(format, func(t *testing.T) {
			g := salesGrid()
			g.Format = format
			g.Rows = failing(errWarehouse)
			if err := PDF(&bytes.Buffer{}, g, generatedAt); !errors.Is(err, errWarehouse) {
				t.Errorf("err = %v, want %v", err, errWarehouse)
			}
		})
	}
}

// pdfImages lists the images each page draws, as "page width×height", with
// pdfimages -list; it skips or fails as pdfText does without the tool.
func pdfImages(t *testing.T, pdf []byte) []string {
	t.Helper()
	if _, err := exec.LookPath("pdfimages"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdfimages not on PATH: .ci/run installs Debian's poppler-utils")
		}
		t.Skip("pdfimages not on PATH (apt-get install poppler-utils)")
	}
	f := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", f).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	var images []string
	for _, line := range strings.Split(string(out), "\n")[2:] { // two header lines
		if f := strings.Fields(line); len(f) > 4 {
			images = append(images, f[0]+" "+f[3]+"×"+f[4])
		}
	}
	return images
}

// TestPDFChartShowsTheChart: a chart report's PDF draws the chart on its
// first page above the whole table; a grid report's draws no image.
func TestPDFChartShowsTheChart(t *testing.T) {
	t.Parallel()
	chart := renderPDF(t, salesGrid())
	if got := pdfImages(t, chart); len(got) != 1 || got[0] != "1 1200×700" {
		t.Fatalf("the chart report's PDF draws %v, want the 1200×700 chart on page 1", got)
	}
	pages := pdfText(t, chart)
	if len(pages) != 1 || !strings.Contains(pages[0], "Middle East & Africa") || !strings.Contains(pages[0], "$1,254,300.50") {
		t.Fatalf("the table is not under the chart:\n%s", strings.Join(pages, "\f"))
	}
	g := salesGrid()
	g.Format = grid.FormatGrid
	if got := pdfImages(t, renderPDF(t, g)); len(got) != 0 {
		t.Fatalf("the grid report's PDF draws %v", got)
	}
	long := longGrid(500)
	long.Format, long.Chart = grid.FormatChart, grid.ChartLine
	pdf := renderPDF(t, long)
	if got := pdfImages(t, pdf); len(got) != 1 || got[0] != "1 1200×700" || len(pdfText(t, pdf)) < 2 {
		t.Fatalf("a long chart report draws %v: want its chart once, on page 1, and its table on more pages", got)
	}
}

// pdfContent inflates the Flate-compressed streams of a PDF, where its pages
// keep their drawing operators, and joins them.
func pdfContent(t *testing.T, pdf []byte) string {
	t.Helper()
	var out strings.Builder
	for rest := pdf; ; {
		i := bytes.Index(rest, []byte("stream\n"))
		if i < 0 {
			break
		}
		rest = rest[i+len("stream\n"):]
		end := bytes.Index(rest, []byte("\nendstream"))
		if end < 0 {
			break
		}
		if r, err := zlib.NewReader(bytes.NewReader(rest[:end])); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				out.Write(b)
				out.WriteByte('\n')
			}
		}
		rest = rest[end:]
	}
	if out.Len() == 0 {
		t.Fatal("no Flate stream in the PDF")
	}
	return out.String()
}

// textColor is the fill colour a text operator of a PDF content stream sets
// before its BT: "q 1.000 0.000 0.000 rg BT ... ET Q".
var textColor = regexp.MustCompile(`q ([0-9. ]+ (?:rg|g)) BT `)

// TestPDFNumberColour: a number whose format names a colour for its section
// is drawn in that colour, and the cells after it in the row's colour.
func TestPDFNumberColour(t *testing.T) {
	t.Parallel()
	g := &grid.Grid{
		Title:      "Margins",
		Format:     grid.FormatGrid,
		RowHeaders: []string{"Region"},
		RowKinds:   []string{""},
		Columns: []grid.Column{
			{Path: []string{"Margin"}, Format: "[Red][<0]0.00;[Blue]0.00"},
			{Path: []string{"Units"}, Format: "0.00"},
			{Path: []string{"Share"}, Format: "[Red]0.00"},
		},
		Rows: rowsOf(
			grid.Row{Headers: []string{"North"}, Values: []*float64{num(-1.5), num(3), num(0.25)}},
			grid.Row{Headers: []string{"South"}, Values: []*float64{num(2.25), num(4), nil}},
		),
	}
	pdf := renderPDF(t, g)
	const red, blue, row = "1.000 0.000 0.000 rg", "0.000 0.000 1.000 rg", "0.129 g"
	var cells []string // the colours of the row cells, in drawing order
	for _, m := range textColor.FindAllStringSubmatch(pdfContent(t, pdf), -1) {
		if c := m[1]; c == red || c == blue || c == row {
			cells = append(cells, c)
		}
	}
	want := []string{
		row, red, row, red, // North, -1.50, 3.00, 0.25
		row, blue, row, // South, 2.25, 4.00; the empty Share draws no text
	}
	if strings.Join(cells, ", ") != strings.Join(want, ", ") {
		t.Errorf("the cells are drawn in\n%q, want\n%q", cells, want)
	}
	t.Run("text", func(t *testing.T) {
		text := pdfText(t, pdf)[0]
		if !regexp.MustCompile(`North\s+1.50\s+3.00\s+0.25`).MatchString(text) || !regexp.MustCompile(`South\s+2.25\s+4.00`).MatchString(text) {
			t.Errorf("text lacks the rows:\n%s", text)
		}
	})
}
