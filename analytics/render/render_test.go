package render

import (
	"iter"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
)

func TestContentTypeAndExtension(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, contentType, ext string
	}{
		{"CSV", "text/csv; charset=utf-8", ".csv"},
		{"csv", "text/csv; charset=utf-8", ".csv"},
		{"XLS", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".xlsx"},
		{"PDF", "application/pdf", ".pdf"},
		{"png", "image/png", ".png"},
		{"HTML", "text/html; charset=utf-8", ".html"},
		{"DOCX", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		t.Run("format="+tt.format, func(t *testing.T) {
			if got := ContentType(tt.format); got != tt.contentType {
				t.Errorf("ContentType(%q) = %q, want %q", tt.format, got, tt.contentType)
			}
			if got := Extension(tt.format); got != tt.ext {
				t.Errorf("Extension(%q) = %q, want %q", tt.format, got, tt.ext)
			}
		})
	}
}

// once wraps rows so that a second pass fails the test.
func once(t *testing.T, rows iter.Seq2[grid.Row, error]) iter.Seq2[grid.Row, error] {
	calls := 0
	return func(yield func(grid.Row, error) bool) {
		if calls++; calls > 1 {
			t.Errorf("rows read %d times", calls)
		}
		rows(yield)
	}
}

// reusing streams n rows of longGrid through one Row whose slices it
// overwrites for every row, as a producer that saves allocations may.
func reusing(n int) *grid.Grid {
	g := longGrid(n)
	inner := g.Rows
	g.Rows = func(yield func(grid.Row, error) bool) {
		shared := grid.Row{Headers: make([]string, 2), Values: make([]*float64, 3)}
		for r := range inner {
			copy(shared.Headers, r.Headers)
			copy(shared.Values, r.Values)
			if !yield(shared, nil) {
				return
			}
		}
	}
	return g
}

func TestRenderersReadRowsOnce(t *testing.T) {
	t.Parallel()
	renderers := map[string]func(*grid.Grid) error{
		"CSV":  func(g *grid.Grid) error { return CSV(discard{}, g) },
		"XLSX": func(g *grid.Grid) error { return XLSX(discard{}, g, generatedAt) },
		"PDF":  func(g *grid.Grid) error { return PDF(discard{}, g, generatedAt) },
		"PNG":  func(g *grid.Grid) error { return PNG(discard{}, g) },
		"HTML": func(g *grid.Grid) error { return HTML(discard{}, g, 10) },
	}
	for name, render := range renderers {
		t.Run(name, func(t *testing.T) {
			g := longGrid(300)
			g.Rows = once(t, g.Rows)
			if err := render(g); err != nil {
				t.Fatal(err)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
