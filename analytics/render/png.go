package render

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// Size and limits of a PNG chart. It is laid out on 720×420 logical units
// and drawn at 5/3 pixels each, 1200×700 pixels: text stays legible where the
// image is shown at half its width, as a mail's body and a PDF page show it.
const (
	pngWidth  = 720
	pngHeight = 420
	pngScale  = 5.0 / 3
	pngMargin = 24

	maxBars   = 50  // categories of a bar chart
	maxPoints = 500 // categories of a line chart
	maxSlices = 10  // slices of a pie, the last one "Other" when there are more
	maxSeries = 10  // data columns drawn as series
)

var (
	ink      = color.RGBA{0x21, 0x21, 0x21, 0xff}
	muted    = color.RGBA{0x6b, 0x6b, 0x6b, 0xff}
	gridLine = color.RGBA{0xe3, 0xe6, 0xea, 0xff}
	axisLine = color.RGBA{0x9a, 0x9f, 0xa6, 0xff}
	// palette is Tableau 10: distinct for most colour vision.
	palette = []color.RGBA{
		{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
		{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
		{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff},
	}

	titleStyle  = textStyle{bold: true, size: 26, color: ink}
	subStyle    = textStyle{size: 14, color: muted}
	labelStyle  = textStyle{size: 13, color: ink}
	tickStyle   = textStyle{size: 13, color: muted}
	legendStyle = textStyle{size: 14, color: ink}
	noteStyle   = textStyle{size: 13, color: muted}
)

// PNG draws g as a 1200×700 chart: bars for each category with a bar per
// data column, a line chart when the report asks for one or its first row
// attribute is a date, a pie when it asks for a pie. A oneNumber report, or
// a single value with no row attributes, is drawn as a big number. The chart
// has the title, the filters, a legend, axis labels and ticks in the metric's
// number format. A bar chart draws the first 50 categories, a line chart the
// first 500, a pie the first 9 and the rest as "Other"; the image says when
// anything was left out.
func PNG(w io.Writer, g *grid.Grid) error {
	kind := chartKind(g)
	data, err := collect(g, kind)
	if err != nil {
		return err
	}
	c, err := newCanvas(pngWidth, pngHeight, pngScale)
	if err != nil {
		return fmt.Errorf("load fonts: %w", err)
	}
	defer c.close()
	top := c.heading(g)
	switch {
	case g.Format == grid.FormatOneNumber || data.single():
		c.bigNumber(data, top)
	case data.empty():
		c.text(textStyle{size: 28, color: muted}, "No data", pngWidth/2, (top+pngHeight)/2, 'c')
	case kind == grid.ChartPie:
		c.pie(data, top)
	default:
		c.xy(g, data, kind, top)
	}
	if err := encodePNG(w, c.img); err != nil {
		return fmt.Errorf("encode PNG: %w", err)
	}
	return nil
}

// encodePNG writes img as a PNG of palette colours when it is opaque and has
// at most 256 colours, as bar and line charts mostly are (flat fills and a
// few shades along their edges): every pixel stays as drawn, in about half
// the bytes, which every mail and PDF that shows the chart carries. Other
// images, a pie's many edge shades among them, are written as RGBA.
func encodePNG(w io.Writer, img *image.RGBA) error {
	if p := exactPalette(img); p != nil {
		return png.Encode(w, p)
	}
	return png.Encode(w, img)
}

// exactPalette returns img with a palette of its own colours, or nil when it
// has more than 256 colours or a pixel that is not opaque.
func exactPalette(img *image.RGBA) *image.Paletted {
	b := img.Bounds()
	out := image.NewPaletted(b, nil)
	index := make(map[[4]uint8]uint8, 256)
	var prev [4]uint8 // never an opaque pixel: the first pixel is looked up
	var prevIndex uint8
	for y := b.Min.Y; y < b.Max.Y; y++ {
		src := img.Pix[img.PixOffset(b.Min.X, y):][:4*b.Dx()]
		dst := out.Pix[out.PixOffset(b.Min.X, y):][:b.Dx()]
		for x := range dst {
			c := [4]uint8(src[4*x : 4*x+4])
			if c[3] != 0xff {
				return nil
			}
			if c != prev {
				i, ok := index[c]
				if !ok {
					if len(out.Palette) == 256 {
						return nil
					}
					i = uint8(len(out.Palette))
					index[c] = i
					out.Palette = append(out.Palette, color.RGBA{c[0], c[1], c[2], c[3]})
				}
				prev, prevIndex = c, i
			}
			dst[x] = prevIndex
		}
	}
	return out
}

// chartKind is the chart to draw: bar, line or pie.
func chartKind(g *grid.Grid) string {
	switch {
	case g.Chart == grid.ChartPie:
		return grid.ChartPie
	case g.Chart == grid.ChartLine, len(g.RowKinds) > 0 && g.RowKinds[0] == "date":
		return grid.ChartLine
	}
	return grid.ChartBar
}

// chartData is what a chart draws: categories along one axis and a series
// of values per data column. A missing value is NaN.
type chartData struct {
	categories []string
	series     []chartSeries
	truncated  bool // categories were left out
	other      int  // categories summed into a pie's "Other" slice
	hidden     int  // data columns not drawn
}

type chartSeries struct {
	name   string
	format string
	values []float64
}

func (d *chartData) empty() bool { return len(d.categories) == 0 || len(d.series) == 0 }

// single reports whether the data is one value with no category name.
func (d *chartData) single() bool {
	return len(d.categories) == 1 && d.categories[0] == "" && len(d.series) == 1
}

// collect reads the rows the chart draws.
func collect(g *grid.Grid, kind string) (*chartData, error) {
	d := &chartData{}
	ncols := min(len(g.Columns), maxSeries)
	if kind == grid.ChartPie {
		ncols = min(len(g.Columns), 1)
	}
	d.hidden = len(g.Columns) - ncols
	for _, c := range g.Columns[:ncols] {
		d.series = append(d.series, chartSeries{name: strings.Join(c.Path, " / "), format: c.Format})
	}
	limit := maxBars
	switch kind {
	case grid.ChartLine:
		limit = maxPoints
	case grid.ChartPie:
		limit = maxSlices - 1
	}
	for r, err := range rows(g) {
		if err != nil {
			return nil, fmt.Errorf("read rows: %w", err)
		}
		if len(d.categories) == limit {
			d.truncated = true
			if kind != grid.ChartPie {
				break
			}
			d.addOther(r)
			continue
		}
		d.categories = append(d.categories, joinNonEmpty(r.Headers))
		for i := range d.series {
			v := math.NaN()
			if p := value(r, i); p != nil {
				v = *p
			}
			d.series[i].values = append(d.series[i].values, v)
		}
	}
	if d.other > 0 {
		d.categories = append(d.categories, fmt.Sprintf("Other (%d)", d.other))
	}
	if len(g.RowHeaders) == 0 && len(d.categories) == 1 && len(d.series) > 1 {
		d.transpose()
	}
	return d, nil
}

// addOther adds a row to the "Other" slice of a pie.
func (d *chartData) addOther(r grid.Row) {
	s := &d.series[0]
	if d.other == 0 {
		s.values = append(s.values, 0)
	}
	d.other++
	if p := value(r, 0); p != nil && *p > 0 {
		s.values[len(s.values)-1] += *p
	}
}

// transpose turns one row of several metrics into one series with a
// category per metric.
func (d *chartData) transpose() {
	one := chartSeries{format: d.series[0].format}
	d.categories = d.categories[:0]
	for _, s := range d.series {
		d.categories = append(d.categories, s.name)
		one.values = append(one.values, s.values[0])
	}
	d.series = []chartSeries{one}
}

// heading draws the title and the filters and returns the y below them.
func (c *canvas) heading(g *grid.Grid) int {
	width := pngWidth - 2*pngMargin
	y := pngMargin + 14
	c.text(titleStyle, c.fit(titleStyle, g.Title, width), pngMargin, y, 'l')
	if len(g.Filters) > 0 {
		y += 26
		c.text(subStyle, c.fit(subStyle, "Filters: "+strings.Join(g.Filters, "; "), width), pngMargin, y, 'l')
	}
	return y + 16
}

// bigNumber draws the first value large in the middle, its metric below.
func (c *canvas) bigNumber(d *chartData, top int) {
	text, label := "No data", ""
	if len(d.series) > 0 {
		s := d.series[0]
		label = s.name
		if len(s.values) > 0 && !math.IsNaN(s.values[0]) {
			text = numfmt.Format(s.values[0], s.format)
		}
	}
	st := textStyle{bold: true, size: 140, color: ink}
	for st.size > 24 && c.measure(st, text) > pngWidth-2*pngMargin {
		st.size -= 8
	}
	mid := (top + pngHeight) / 2
	c.text(st, c.fit(st, text, pngWidth-2*pngMargin), pngWidth/2, mid+int(st.size*0.3), 'c')
	ls := textStyle{size: 28, color: muted}
	c.text(ls, c.fit(ls, label, pngWidth-2*pngMargin), pngWidth/2, mid+int(st.size*0.3)+60, 'c')
}

// note draws a remark at the bottom right and returns its width.
func (c *canvas) note(d *chartData) int {
	var parts []string
	if d.truncated && d.other == 0 {
		parts = append(parts, fmt.Sprintf("Showing the first %d categories", len(d.categories)))
	}
	if d.hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d more columns not shown", d.hidden))
	}
	if len(parts) == 0 {
		return 0
	}
	s := strings.Join(parts, "; ")
	c.text(noteStyle, s, pngWidth-pngMargin, pngHeight-14, 'r')
	return c.measure(noteStyle, s)
}

// joinNonEmpty joins the non-empty strings with " / ".
func joinNonEmpty(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(" / ")
		}
		b.WriteString(p)
	}
	return b.String()
}
