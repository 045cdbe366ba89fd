package render

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
)

func renderPNG(t *testing.T, g *grid.Grid) image.Image {
	t.Helper()
	var b bytes.Buffer
	if err := PNG(&b, g); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(1200, 700) {
		t.Fatalf("size = %v, want 1200×700", got)
	}
	return img
}

// pixelStats counts the distinct colours, the pixels that are not white and
// the pixels of each palette colour.
func pixelStats(img image.Image) (colours, inked int, hits map[color.RGBA]int) {
	seen := map[color.RGBA]bool{}
	hits = map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			if c != (color.RGBA{0xff, 0xff, 0xff, 0xff}) {
				inked++
			}
			if slices.Contains(palette, c) {
				hits[c]++
			}
		}
	}
	return len(seen), inked, hits
}

func TestPNG(t *testing.T) {
	t.Parallel()
	line := salesGrid()
	line.Chart = grid.ChartLine
	pie := salesGrid()
	pie.Chart = grid.ChartPie
	tests := []struct {
		name      string
		grid      *grid.Grid
		minInk    float64 // share of pixels that are not white
		minColors int
		series    int // palette colours that must show
	}{
		{"bar", salesGrid(), 0.05, 50, 3},
		{"line by chart type", line, 0.01, 50, 3},
		{"line by date attribute", monthlyGrid(24), 0.01, 50, 2},
		{"pie", pie, 0.2, 50, 6},
		{"many categories", manyGrid(80, grid.ChartBar), 0.1, 50, 1},
		{"two attributes, many rows", longGrid(2000), 0.05, 50, 2},
		{"pivot", pivotGrid(), 0.01, 50, 2},
		{"one number", oneNumberGrid(), 0.03, 20, 0},
		{"no rows", longGrid(0), 0.002, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := renderPNG(t, tt.grid)
			colours, inked, hits := pixelStats(img)
			if share := float64(inked) / (1200 * 700); share < tt.minInk {
				t.Errorf("%.1f%% of the pixels drawn, want at least %.1f%%", share*100, tt.minInk*100)
			}
			if colours < tt.minColors {
				t.Errorf("%d colours, want at least %d", colours, tt.minColors)
			}
			for i := range tt.series {
				if hits[palette[i]] < 50 {
					t.Errorf("series colour %d drawn on %d pixels", i, hits[palette[i]])
				}
			}
		})
	}
}

func TestPNGPaletteIsExact(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 6), uint8(y), 0x80, 0xff}) // 1,200 colours
		}
	}
	if exactPalette(img) != nil {
		t.Error("an image of 1,200 colours got a palette")
	}
	for y := range 30 {
		for x := range 40 {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 6), uint8(y % 6), 0x80, 0xff}) // 240 colours
		}
	}
	var b bytes.Buffer
	if err := encodePNG(&b, img); err != nil {
		t.Fatal(err)
	}
	got, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*image.Paletted); !ok {
		t.Fatalf("an image of 240 colours decodes as %T, want *image.Paletted", got)
	}
	for y := range 30 {
		for x := range 40 {
			if c := color.RGBAModel.Convert(got.At(x, y)); c != img.RGBAAt(x, y) {
				t.Fatalf("pixel %d,%d = %v, want %v", x, y, c, img.RGBAAt(x, y))
			}
		}
	}
	img.SetRGBA(3, 4, color.RGBA{0x10, 0x10, 0x10, 0x80})
	if exactPalette(img) != nil {
		t.Error("an image with a translucent pixel got a palette")
	}
}

// A bar chart has few colours and is written with a palette, in about half
// the bytes of RGBA; a pie's edges have too many shades for one.
func TestPNGChartPalette(t *testing.T) {
	t.Parallel()
	var bar bytes.Buffer
	if err := PNG(&bar, salesGrid()); err != nil {
		t.Fatal(err)
	}
	size := bar.Len()
	img, err := png.Decode(&bar)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := img.(*image.Paletted); !ok {
		t.Fatalf("bar chart decodes as %T, want *image.Paletted", img)
	}
	rgba := image.NewRGBA(img.Bounds())
	for y := range 700 {
		for x := range 1200 {
			rgba.Set(x, y, img.At(x, y))
		}
	}
	var full bytes.Buffer
	if err := png.Encode(&full, rgba); err != nil {
		t.Fatal(err)
	}
	t.Logf("bar chart: %d bytes with a palette, %d as RGBA", size, full.Len())
	if size > full.Len()*6/10 {
		t.Errorf("bar chart: %d bytes with a palette, %d as RGBA: want at most 60%%", size, full.Len())
	}
	pie := salesGrid()
	pie.Chart = grid.ChartPie
	switch img := renderPNG(t, pie).(type) {
	case *image.RGBA, *image.NRGBA:
	default:
		t.Errorf("pie decodes as %T, want RGBA", img)
	}
}

func TestPNGRowsFail(t *testing.T) {
	t.Parallel()
	g := salesGrid()
	g.Rows = failing(errWarehouse)
	if err := PNG(&bytes.Buffer{}, g); !errors.Is(err, errWarehouse) {
		t.Errorf("err = %v, want %v", err, errWarehouse)
	}
}

func TestChartKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		chart string
		kinds []string
		want  string
	}{
		{"bar", grid.ChartBar, []string{""}, grid.ChartBar},
		{"no chart type", "", []string{""}, grid.ChartBar},
		{"line", grid.ChartLine, []string{""}, grid.ChartLine},
		{"date attribute", grid.ChartBar, []string{"date"}, grid.ChartLine},
		{"date attribute second", "", []string{"", "date"}, grid.ChartBar},
		{"pie", grid.ChartPie, []string{"date"}, grid.ChartPie},
		{"no attributes", "", nil, grid.ChartBar},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chartKind(&grid.Grid{Chart: tt.chart, RowKinds: tt.kinds}); got != tt.want {
				t.Errorf("chartKind = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCollect(t *testing.T) {
	t.Parallel()
	t.Run("bar keeps the first 50", func(t *testing.T) {
		d, err := collect(manyGrid(80, grid.ChartBar), grid.ChartBar)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.categories) != maxBars || !d.truncated {
			t.Errorf("%d categories, truncated %v; want %d, true", len(d.categories), d.truncated, maxBars)
		}
	})
	t.Run("pie sums the rest", func(t *testing.T) {
		g := manyGrid(30, grid.ChartPie)
		d, err := collect(g, grid.ChartPie)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.categories) != maxSlices || d.categories[maxSlices-1] != "Other (21)" {
			t.Fatalf("categories = %q", d.categories)
		}
		want := 0.0
		i := 0
		for r := range g.Rows {
			if i >= maxSlices-1 {
				want += *r.Values[0]
			}
			i++
		}
		if got := d.series[0].values[maxSlices-1]; math.Abs(got-want) > 1e-9 {
			t.Errorf("Other = %v, want %v", got, want)
		}
	})
	t.Run("empty values and joined headers", func(t *testing.T) {
		d, err := collect(pivotGrid(), grid.ChartBar)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"Čechy / Žluťoučký kůň", `Morava / Say "hi", world`, "Slezsko"}; !slices.Equal(d.categories, want) {
			t.Errorf("categories = %q, want %q", d.categories, want)
		}
		if len(d.series) != 4 || d.series[0].name != "2024 / Revenue" || !math.IsNaN(d.series[0].values[1]) {
			t.Errorf("series = %+v", d.series)
		}
	})
	t.Run("no attributes turns metrics into categories", func(t *testing.T) {
		g := &grid.Grid{
			Columns: []grid.Column{{Path: []string{"Revenue"}}, {Path: []string{"Cost"}}},
			Rows:    rowsOf(grid.Row{Values: []*float64{num(10), num(4)}}),
		}
		d, err := collect(g, grid.ChartBar)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.categories, []string{"Revenue", "Cost"}) || len(d.series) != 1 || !slices.Equal(d.series[0].values, []float64{10, 4}) {
			t.Errorf("data = %+v", d)
		}
	})
	t.Run("one value is a big number", func(t *testing.T) {
		g := oneNumberGrid()
		g.Format = grid.FormatGrid
		d, err := collect(g, grid.ChartBar)
		if err != nil {
			t.Fatal(err)
		}
		if !d.single() {
			t.Errorf("one value with no attributes is not single: %+v", d)
		}
	})
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		lo, hi float64
		want   []float64
	}{
		{"thousands", 0, 1402999.99, []float64{0, 500000, 1000000, 1500000}},
		{"percent", 0, 0.312, []float64{0, 0.1, 0.2, 0.3, 0.4}},
		{"negative", -500, 153.2, []float64{-600, -400, -200, 0, 200}},
		{"small range", 99.5, 100.5, []float64{99.4, 99.6, 99.8, 100, 100.2, 100.4, 100.6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := niceTicks(tt.lo, tt.hi, 6)
			if !slices.Equal(got, tt.want) {
				t.Errorf("niceTicks(%v, %v) = %v, want %v", tt.lo, tt.hi, got, tt.want)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	t.Parallel()
	c, err := newCanvas(10, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	tests := []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"fits", "Europe", 120, []string{"Europe"}},
		{"wraps at spaces", "Product line 001 – Žluťoučký kůň edition", 120, []string{"Product line 001 –", "Žluťoučký kůň", "edition"}},
		{"too long for three lines", "one two three four five six seven eight nine ten", 60, []string{"one two", "three four", "five six…"}},
		{"long word", "Žluťoučkýkůňpělďábelskéódy", 80, []string{"Žluťoučkýk…"}},
		{"empty", "", 80, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.wrap(labelStyle, tt.text, tt.width, wrapLines)
			if !slices.Equal(got, tt.want) {
				t.Errorf("wrap = %q, want %q", got, tt.want)
			}
			for _, l := range got {
				if w := c.measure(labelStyle, l); w > tt.width {
					t.Errorf("line %q is %d px, wider than %d", l, w, tt.width)
				}
			}
		})
	}
}
