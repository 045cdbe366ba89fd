package render

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
)

// TestSamples renders every sample report in every format; with
// -keep DIR it leaves the files there to be looked at:
//
//	go test ./analytics/render -run Samples -keep /tmp/samples
func TestSamples(t *testing.T) {
	t.Parallel()
	samples := map[string]func() *grid.Grid{
		"sales":    salesGrid,
		"pie":      func() *grid.Grid { g := salesGrid(); g.Chart = grid.ChartPie; return g },
		"monthly":  func() *grid.Grid { return monthlyGrid(24) },
		"decade":   func() *grid.Grid { return monthlyGrid(120) },
		"few":      func() *grid.Grid { return manyGrid(8, grid.ChartBar) },
		"many":     func() *grid.Grid { return manyGrid(80, grid.ChartBar) },
		"many-pie": func() *grid.Grid { return manyGrid(30, grid.ChartPie) },
		"one":      oneNumberGrid,
		"wide":     wideGrid,
		"pivot":    pivotGrid,
		"long":     func() *grid.Grid { return longGrid(500) },
		"no-rows":  func() *grid.Grid { return longGrid(0) },
	}
	for name, g := range samples {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			steps := []struct {
				ext    string
				render func() error
			}{
				{".csv", func() error { return CSV(&b, g()) }},
				{".xlsx", func() error { return XLSX(&b, g(), generatedAt) }},
				{".pdf", func() error { return PDF(&b, g(), generatedAt) }},
				{".png", func() error { return PNG(&b, g()) }},
			}
			for _, s := range steps {
				b.Reset()
				if err := s.render(); err != nil {
					t.Fatalf("%s: %v", s.ext, err)
				}
				if b.Len() == 0 {
					t.Fatalf("%s: nothing written", s.ext)
				}
				keepFile(t, name+s.ext, b.Bytes())
			}
		})
	}
}
