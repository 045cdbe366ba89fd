package render

import (
	"image"
	"math"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/numfmt"
)

// plot is the value area of a bar or line chart, in pixels.
type plot struct {
	left, right, top, bottom int
	lo, hi                   float64 // the values at the bottom and the top
	slot                     float64 // the width given to each category
}

func (p plot) y(v float64) float64 {
	return float64(p.bottom) - (v-p.lo)/(p.hi-p.lo)*float64(p.bottom-p.top)
}

// center is the x of the middle of category i.
func (p plot) center(i int) float64 { return float64(p.left) + p.slot*(float64(i)+0.5) }

// xy draws a bar or line chart below top.
func (c *canvas) xy(g *grid.Grid, d *chartData, kind string, top int) {
	top = c.legend(d, top)
	lo, hi := valueRange(d, kind == grid.ChartBar)
	ticks, step := niceTicks(lo, hi, 6)
	p := plot{right: pngWidth - pngMargin, top: top + 12}
	p.lo, p.hi, ticks = trimAxis(ticks, step, lo, hi)
	format := numfmt.Axis(tickFormat(d), step)
	labels := make([]string, len(ticks))
	tickW := 0
	for i, t := range ticks {
		labels[i] = numfmt.Format(t, format)
		tickW = max(tickW, c.measure(tickStyle, labels[i]))
	}
	yTitle := ""
	if len(d.series) == 1 {
		yTitle = d.series[0].name
	}
	p.left = pngMargin + tickW + 12
	if yTitle != "" {
		p.left += c.lineHeight(labelStyle) + 8
	}
	p.slot = float64(p.right-p.left) / float64(len(d.categories))
	xl := c.xLabelLayout(d.categories, p.slot, kind == grid.ChartLine)
	base := pngHeight - 14 // baseline of the axis title and the note
	p.bottom = base - c.lineHeight(labelStyle) - 10 - xl.band

	for i, t := range ticks {
		y := int(math.Round(p.y(t)))
		c.hline(p.left, p.right, y, gridLine)
		c.text(tickStyle, labels[i], p.left-8, y+5, 'r')
	}
	if kind == grid.ChartLine {
		c.lines(d, p)
	} else {
		c.bars(d, p)
	}
	zero := int(math.Round(p.y(max(p.lo, min(0, p.hi)))))
	c.hline(p.left, p.right, zero, axisLine)
	c.xLabels(d.categories, p, xl)

	noteW := c.note(d)
	if title := strings.Join(g.RowHeaders, " / "); title != "" {
		room := p.right - p.left - 2*noteW - 20
		c.text(labelStyle, c.fit(labelStyle, title, room), (p.left+p.right)/2, base, 'c')
	}
	if yTitle != "" {
		s := c.fit(labelStyle, yTitle, p.bottom-p.top)
		c.textUp(labelStyle, s, pngMargin, (p.top+p.bottom)/2+c.measure(labelStyle, s)/2)
	}
}

// legend draws a colour key per series, wrapping lines, and returns the y
// below it.
func (c *canvas) legend(d *chartData, top int) int {
	x, y := pngMargin, top+14
	for i, s := range d.series {
		name := s.name
		if name == "" {
			name = "Value"
		}
		name = c.fit(legendStyle, name, 320)
		w := 14 + 6 + c.measure(legendStyle, name)
		if x > pngMargin && x+w > pngWidth-pngMargin {
			x, y = pngMargin, y+24
		}
		c.rect(image.Rect(x, y-12, x+14, y+2), palette[i%len(palette)])
		c.text(legendStyle, name, x+20, y, 'l')
		x += w + 24
	}
	return y + 12
}

// valueRange is the smallest and largest value of the series; a bar chart
// always takes in zero.
func valueRange(d *chartData, withZero bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range d.series {
		for _, v := range s.values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if lo > hi { // no values
		return 0, 1
	}
	if withZero {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if lo == hi {
		pad := max(math.Abs(lo)*0.1, 1)
		if lo == 0 && withZero {
			return 0, 1
		}
		lo, hi = lo-pad, hi+pad
	}
	return lo, hi
}

// tickFormat is the number format of the value axis: the series' own when
// they share one, else plain grouped digits.
func tickFormat(d *chartData) string {
	for _, s := range d.series[1:] {
		if s.format != d.series[0].format {
			return "#,##0"
		}
	}
	return d.series[0].format
}

// trimAxis returns the ends of the value axis and the ticks on it. An end
// stays on the outer tick unless the data stops well short of it, as a few
// small negative values would leave most of a tick's span empty.
func trimAxis(ticks []float64, step, lo, hi float64) (from, to float64, in []float64) {
	from, to = ticks[0], ticks[len(ticks)-1]
	if lo != 0 && lo-from > 0.6*step {
		from = lo - 0.1*step
	}
	if hi != 0 && to-hi > 0.6*step {
		to = hi + 0.1*step
	}
	for _, t := range ticks {
		if t >= from && t <= to {
			in = append(in, t)
		}
	}
	return from, to, in
}

// niceTicks returns evenly spaced round values from at or below lo to at or
// above hi, about n of them, and their step.
func niceTicks(lo, hi float64, n int) ([]float64, float64) {
	step := niceStep((hi - lo) / float64(n-1))
	decimals := max(0, 1-int(math.Floor(math.Log10(step))))
	start, end := math.Floor(lo/step), math.Ceil(hi/step)
	var out []float64
	for k := start; k <= end && len(out) < 4*n; k++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(k*step, 'f', decimals, 64), 64)
		out = append(out, v)
	}
	if len(out) < 2 {
		out = append(out, out[0]+step)
	}
	return out, step
}

// niceStep rounds x up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if x <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// bars draws a group of bars per category, one per series.
func (c *canvas) bars(d *chartData, p plot) {
	k := len(d.series)
	group := p.slot * 0.8
	bw := group / float64(k)
	gap := 0.0
	if bw > 6 && k > 1 {
		gap = 1
	}
	zero := p.y(max(p.lo, min(0, p.hi)))
	labels := len(d.categories)*k <= 24
	for i := range d.categories {
		x0 := p.center(i) - group/2
		for j, s := range d.series {
			v := s.values[i]
			if math.IsNaN(v) {
				continue
			}
			l, r := int(math.Round(x0+float64(j)*bw)), int(math.Round(x0+float64(j+1)*bw-gap))
			r = max(r, l+1)
			y := p.y(v)
			c.rect(image.Rect(l, int(math.Round(min(y, zero))), r, int(math.Round(max(y, zero)))), palette[j%len(palette)])
			if !labels {
				continue
			}
			text := numfmt.Format(v, s.format)
			if c.measure(tickStyle, text) > r-l+8 {
				continue
			}
			// Above a bar, or below a negative one, when there is room.
			lh := c.lineHeight(labelStyle)
			switch {
			case v >= 0 && int(y)-6-lh >= p.top:
				c.text(labelStyle, text, (l+r)/2, int(y)-6, 'c')
			case v < 0 && int(y)+4+lh <= p.bottom:
				c.text(labelStyle, text, (l+r)/2, int(y)+lh, 'c')
			}
		}
	}
}

// lines draws a line per series, broken where a value is missing, with a
// dot on each point when there are few.
func (c *canvas) lines(d *chartData, p plot) {
	dots := len(d.categories) <= 60
	for j, s := range d.series {
		path := c.begin()
		for i, v := range s.values {
			if math.IsNaN(v) {
				continue
			}
			x, y := p.center(i), p.y(v)
			next := i+1 < len(s.values) && !math.IsNaN(s.values[i+1])
			if next {
				path.segment(x, y, p.center(i+1), p.y(s.values[i+1]), 2.5)
			}
			prev := i > 0 && !math.IsNaN(s.values[i-1])
			if dots || (!next && !prev) {
				path.circle(x, y, 4)
			}
		}
		path.fill(c.img, palette[j%len(palette)])
	}
}

// xLayout says how category labels go under the axis.
type xLayout struct {
	every   int  // label every n-th category
	rotated bool // labels read upwards
	lines   int  // lines a flat label may wrap onto
	band    int  // height the labels take, in pixels
	width   int  // the widest a label (or a line of it) may be, in pixels
}

// Labels wrap onto up to wrapLines lines when each category has at least
// wrapSlot pixels; narrower categories get labels that read upwards.
const (
	wrapLines = 3
	wrapSlot  = 90
)

func (c *canvas) xLabelLayout(cats []string, slot float64, preferFlat bool) xLayout {
	widest := 0
	for _, s := range cats {
		widest = max(widest, c.measure(labelStyle, s))
	}
	lh := c.lineHeight(labelStyle)
	flat := xLayout{every: 1, lines: 1, band: lh, width: int(slot) - 8}
	switch {
	case widest <= flat.width:
		return flat
	case slot >= wrapSlot:
		for _, s := range cats {
			flat.lines = max(flat.lines, len(c.wrap(labelStyle, s, flat.width, wrapLines)))
		}
		flat.band = flat.lines * lh
		return flat
	case preferFlat:
		flat.width = min(widest, 200)
		flat.every = int(math.Ceil(float64(flat.width+16) / slot))
		return flat
	}
	up := xLayout{rotated: true, lines: 1, width: min(widest, 160)}
	up.band = up.width
	up.every = max(1, int(math.Ceil(float64(lh+2)/slot)))
	return up
}

// xLabels draws the category labels.
func (c *canvas) xLabels(cats []string, p plot, l xLayout) {
	lh := c.lineHeight(labelStyle)
	for i := 0; i < len(cats); i += l.every {
		x := int(math.Round(p.center(i)))
		c.rect(image.Rect(x, p.bottom, x+1, p.bottom+4), axisLine)
		if l.rotated {
			s := c.fit(labelStyle, cats[i], l.width)
			c.textUp(labelStyle, s, x-lh/2, p.bottom+8+c.measure(labelStyle, s))
			continue
		}
		for k, line := range c.wrap(labelStyle, cats[i], l.width, l.lines) {
			c.text(labelStyle, line, x, p.bottom+4+(k+1)*lh, 'c')
		}
	}
}

// wrap breaks s into at most n lines no wider than width, at spaces; the
// last line ends in an ellipsis when s does not fit.
func (c *canvas) wrap(st textStyle, s string, width, n int) []string {
	var lines []string
	line := ""
	words := strings.Fields(s)
	for i, w := range words {
		next := w
		if line != "" {
			next = line + " " + w
		}
		if c.measure(st, next) <= width || line == "" && len(lines) == n-1 {
			line = next
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		if len(lines) == n-1 {
			line = strings.Join(words[i:], " ")
			break
		}
		line = w
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	for i, l := range lines {
		lines[i] = c.fit(st, l, width)
	}
	return lines
}
