package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// canvas is an RGBA image with text and anti-aliased shapes. Drawing is in
// logical units, scale pixels each, so a chart laid out for a small image
// is drawn sharp on a large one.
type canvas struct {
	img   *image.RGBA
	scale float64
	fonts [2]*opentype.Font
	faces map[faceKey]font.Face
	ras   *vector.Rasterizer
}

type faceKey struct {
	bold bool
	size float64
}

// newCanvas returns a white canvas of w×h logical units, scale pixels each.
func newCanvas(w, h int, scale float64) (*canvas, error) {
	fonts, err := parsedFonts()
	if err != nil {
		return nil, err
	}
	pw, ph := int(math.Round(float64(w)*scale)), int(math.Round(float64(h)*scale))
	c := &canvas{
		img:   image.NewRGBA(image.Rect(0, 0, pw, ph)),
		scale: scale,
		fonts: fonts,
		faces: map[faceKey]font.Face{},
		ras:   vector.NewRasterizer(pw, ph),
	}
	draw.Draw(c.img, c.img.Bounds(), image.White, image.Point{}, draw.Src)
	return c, nil
}

func (c *canvas) close() {
	for _, f := range c.faces {
		f.Close()
	}
}

func (c *canvas) face(bold bool, size float64) font.Face {
	k := faceKey{bold, size}
	if f, ok := c.faces[k]; ok {
		return f
	}
	i := 0
	if bold {
		i = 1
	}
	f, err := opentype.NewFace(c.fonts[i], &opentype.FaceOptions{Size: size * c.scale, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		// Only a bad size fails, and the sizes here are constants.
		f = basicfont.Face7x13
	}
	c.faces[k] = f
	return f
}

// textStyle is a font and a colour.
type textStyle struct {
	bold  bool
	size  float64
	color color.Color
}

// px is a logical length in pixels.
func (c *canvas) px(v int) int { return int(math.Round(float64(v) * c.scale)) }

// measure is the width of s in logical units.
func (c *canvas) measure(st textStyle, s string) int {
	return int(math.Ceil(float64(font.MeasureString(c.face(st.bold, st.size), s)) / 64 / c.scale))
}

// fit returns s, or as much of it as fits in width pixels followed by an ellipsis.
func (c *canvas) fit(st textStyle, s string, width int) string {
	if c.measure(st, s) <= width {
		return s
	}
	r := []rune(s)
	lo, hi := 0, len(r)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.measure(st, string(r[:mid])+ellipsis) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return ""
	}
	return strings.TrimRight(string(r[:lo]), " ") + ellipsis
}

// text draws s with its baseline at y; align is 'l', 'c' or 'r' for x being
// the left end, the middle or the right end of the text.
func (c *canvas) text(st textStyle, s string, x, y int, align byte) {
	w := c.measure(st, s)
	switch align {
	case 'c':
		x -= w / 2
	case 'r':
		x -= w
	}
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(st.color), Face: c.face(st.bold, st.size), Dot: fixed.P(c.px(x), c.px(y))}
	d.DrawString(s)
}

// textUp draws s turned a quarter left, reading upwards, with its end at the
// top; (x, y) is the bottom of the text's first letter, its baseline on x+ascent.
func (c *canvas) textUp(st textStyle, s string, x, y int) {
	face := c.face(st.bold, st.size)
	m := face.Metrics()
	w, h := font.MeasureString(face, s).Ceil(), (m.Ascent + m.Descent).Ceil() // pixels
	if w == 0 {
		return
	}
	mask := image.NewAlpha(image.Rect(0, 0, w, h))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.Point26_6{Y: m.Ascent}}
	d.DrawString(s)
	up := image.NewAlpha(image.Rect(0, 0, h, w))
	for py := 0; py < h; py++ {
		for px := 0; px < w; px++ {
			up.SetAlpha(py, w-1-px, mask.AlphaAt(px, py))
		}
	}
	r := image.Rect(c.px(x), c.px(y)-w, c.px(x)+h, c.px(y))
	draw.DrawMask(c.img, r, image.NewUniform(st.color), image.Point{}, up, image.Point{}, draw.Over)
}

// lineHeight is the distance between baselines of a text style.
func (c *canvas) lineHeight(st textStyle) int {
	m := c.face(st.bold, st.size).Metrics()
	return int(math.Ceil(float64(m.Ascent+m.Descent) / 64 / c.scale))
}

func (c *canvas) rect(r image.Rectangle, col color.Color) {
	r = image.Rect(c.px(r.Min.X), c.px(r.Min.Y), c.px(r.Max.X), c.px(r.Max.Y))
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Over)
}

func (c *canvas) hline(x0, x1, y int, col color.Color) {
	c.rect(image.Rect(x0, y, x1, y+1), col)
}

// path is a polygon or a set of polygons filled together, in logical units.
type path struct {
	ras   *vector.Rasterizer
	scale float32
}

// begin starts a path; fill draws it.
func (c *canvas) begin() path {
	b := c.img.Bounds()
	c.ras.Reset(b.Dx(), b.Dy())
	return path{c.ras, float32(c.scale)}
}

func (p path) fill(img *image.RGBA, col color.Color) {
	p.ras.Draw(img, img.Bounds(), image.NewUniform(col), image.Point{})
}

// segment adds a straight stroke of width w from (x0, y0) to (x1, y1), with
// round ends so that joined segments make a smooth line.
func (p path) segment(x0, y0, x1, y1, w float64) {
	dx, dy := x1-x0, y1-y0
	l := math.Hypot(dx, dy)
	if l > 0 {
		nx, ny := -dy/l*w/2, dx/l*w/2
		p.polygon([][2]float64{{x0 + nx, y0 + ny}, {x1 + nx, y1 + ny}, {x1 - nx, y1 - ny}, {x0 - nx, y0 - ny}})
	}
	p.circle(x0, y0, w/2)
	p.circle(x1, y1, w/2)
}

// circle adds a disc.
func (p path) circle(x, y, r float64) {
	p.arc(x, y, r, 0, 2*math.Pi, false)
}

// arc adds the sector of a disc from angle a0 to a1 (radians, clockwise on
// screen from the x axis); with wedge it is a pie slice, else the whole disc
// segment between the angles.
func (p path) arc(x, y, r, a0, a1 float64, wedge bool) {
	n := max(int(math.Ceil((a1-a0)*r*float64(p.scale)/3)), 8)
	pts := make([][2]float64, 0, n+2)
	if wedge {
		pts = append(pts, [2]float64{x, y})
	}
	for i := 0; i <= n; i++ {
		a := a0 + (a1-a0)*float64(i)/float64(n)
		pts = append(pts, [2]float64{x + r*math.Cos(a), y + r*math.Sin(a)})
	}
	p.polygon(pts)
}

// polygon adds a closed polygon. All polygons of a path must turn the same
// way, as overlapping ones of opposite turn cancel out.
func (p path) polygon(pts [][2]float64) {
	// Make every polygon turn the same way, whatever order its points come in.
	area := 0.0
	for i := range pts {
		j := (i + 1) % len(pts)
		area += pts[i][0]*pts[j][1] - pts[j][0]*pts[i][1]
	}
	for i := range pts {
		k := i
		if area < 0 {
			k = len(pts) - 1 - i
		}
		if i == 0 {
			p.ras.MoveTo(float32(pts[k][0])*p.scale, float32(pts[k][1])*p.scale)
		} else {
			p.ras.LineTo(float32(pts[k][0])*p.scale, float32(pts[k][1])*p.scale)
		}
	}
	p.ras.ClosePath()
}
