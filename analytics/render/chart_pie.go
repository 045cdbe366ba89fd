package render

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/heraldhq/herald/analytics/numfmt"
)

var otherColor = color.RGBA{0xbb, 0xbb, 0xbb, 0xff}

// pie draws the first series as a pie with a key on the right giving each
// slice's value and share. Negative and missing values have no slice.
func (c *canvas) pie(d *chartData, top int) {
	s := d.series[0]
	total, left := 0.0, 0
	for _, v := range s.values {
		if v > 0 && !math.IsInf(v, 0) {
			total += v
		} else {
			left++
		}
	}
	if total == 0 {
		c.text(textStyle{size: 28, color: muted}, "No positive values to draw", pngWidth/2, (top+pngHeight)/2, 'c')
		return
	}
	r := float64(min((pngHeight-top-50)/2, 250))
	cx, cy := float64(pngMargin)+r+20, float64(top+pngHeight-20)/2
	colorOf := func(i int) color.RGBA {
		if d.other > 0 && i == len(d.categories)-1 {
			return otherColor
		}
		return palette[i%len(palette)]
	}

	a := -math.Pi / 2
	type mid struct{ angle, share float64 }
	var mids []mid
	for i, v := range s.values {
		if !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		sweep := v / total * 2 * math.Pi
		path := c.begin()
		path.arc(cx, cy, r, a, a+sweep, true)
		path.fill(c.img, colorOf(i))
		mids = append(mids, mid{a + sweep/2, v / total})
		a += sweep
	}
	// White edges between slices, then shares on the slices large enough.
	if len(mids) > 1 {
		edges := c.begin()
		a = -math.Pi / 2
		for _, m := range mids {
			edges.segment(cx, cy, cx+r*math.Cos(a), cy+r*math.Sin(a), 2)
			a += 2 * m.share * math.Pi
		}
		edges.fill(c.img, color.White)
	}
	share := textStyle{bold: true, size: 16, color: color.White}
	for _, m := range mids {
		if m.share >= 0.04 {
			x, y := cx+0.68*r*math.Cos(m.angle), cy+0.68*r*math.Sin(m.angle)
			c.text(share, fmt.Sprintf("%.0f%%", m.share*100), int(x), int(y)+6, 'c')
		}
	}
	c.pieKey(d, total, colorOf, int(cx+r)+60, top)
	if left > 0 {
		what := "values have"
		if left == 1 {
			what = "value has"
		}
		c.text(noteStyle, fmt.Sprintf("%d %s no slice (zero, negative or empty)", left, what), pngWidth-pngMargin, pngHeight-14, 'r')
	}
}

// pieKey lists the slices with their values and shares from x rightwards.
func (c *canvas) pieKey(d *chartData, total float64, colorOf func(int) color.RGBA, x, top int) {
	s := d.series[0]
	right := pngWidth - pngMargin
	lh := 30
	y := max(top+30, (top+pngHeight)/2-len(d.categories)*lh/2)
	if s.name != "" {
		st := textStyle{bold: true, size: 15, color: ink}
		c.text(st, c.fit(st, s.name, right-x), x, y, 'l')
		y += lh
	}
	for i, name := range d.categories {
		v := s.values[i]
		val := ""
		if !math.IsNaN(v) {
			val = numfmt.Format(v, s.format)
			if v > 0 {
				val += fmt.Sprintf("  (%.1f%%)", v/total*100)
			}
		}
		vw := c.measure(legendStyle, val)
		c.rect(image.Rect(x, y-13, x+16, y+3), colorOf(i))
		c.text(legendStyle, c.fit(legendStyle, name, right-x-24-vw-16), x+24, y, 'l')
		c.text(legendStyle, val, right, y, 'r')
		y += lh
	}
}
