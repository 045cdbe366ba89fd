package render

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"strconv"
)

// ModelDataset is one box of a picture of a data model: a dataset's title, its counts of
// attributes and facts, whether it is a date dimension, and the indexes (in the slice
// given to ModelPNG) of the datasets it references.
type ModelDataset struct {
	Title      string
	Attributes int
	Facts      int
	Date       bool
	References []int
}

// Layout of a model picture, in logical units drawn one pixel each.
const (
	modelBoxW   = 200
	modelBoxH   = 64
	modelGap    = 48
	modelMargin = 24
	// MaxModelDatasets bounds the datasets a model picture draws; it says how many more
	// there are.
	MaxModelDatasets = 64
)

var (
	modelFill     = color.RGBA{0xe8, 0xf0, 0xf8, 0xff}
	modelDateFill = color.RGBA{0xfd, 0xf1, 0xe2, 0xff}
	modelEdge     = color.RGBA{0x4e, 0x79, 0xa7, 0xff}
	modelTitle    = textStyle{bold: true, size: 13, color: ink}
	modelCounts   = textStyle{size: 11, color: muted}
)

// ModelPNG draws a small picture of a data model: a box per dataset with its title and
// counts, date dimensions in another colour, on a grid in the given order, and a line
// from each dataset to every dataset it references.
func ModelPNG(w io.Writer, datasets []ModelDataset) error {
	shown := datasets[:min(len(datasets), MaxModelDatasets)]
	cols := max(1, int(math.Ceil(math.Sqrt(float64(len(shown))))))
	rows := max(1, (len(shown)+cols-1)/cols)
	width := 2*modelMargin + cols*modelBoxW + (cols-1)*modelGap
	height := 2*modelMargin + rows*modelBoxH + (rows-1)*modelGap + 20
	c, err := newCanvas(width, height, 1)
	if err != nil {
		return fmt.Errorf("load fonts: %w", err)
	}
	defer c.close()
	box := func(i int) image.Rectangle {
		x, y := modelMargin+(i%cols)*(modelBoxW+modelGap), modelMargin+(i/cols)*(modelBoxH+modelGap)
		return image.Rect(x, y, x+modelBoxW, y+modelBoxH)
	}
	center := func(i int) (float64, float64) {
		r := box(i)
		return float64(r.Min.X+r.Max.X) / 2, float64(r.Min.Y+r.Max.Y) / 2
	}
	lines := c.begin()
	for i, d := range shown {
		for _, j := range d.References {
			if j >= 0 && j < len(shown) && j != i {
				x0, y0 := center(i)
				x1, y1 := center(j)
				lines.segment(x0, y0, x1, y1, 2)
			}
		}
	}
	lines.fill(c.img, axisLine)
	for i, d := range shown {
		r := box(i)
		fill := modelFill
		if d.Date {
			fill = modelDateFill
		}
		c.rect(r, modelEdge)
		c.rect(r.Inset(2), fill)
		c.text(modelTitle, c.fit(modelTitle, d.Title, modelBoxW-16), r.Min.X+8, r.Min.Y+24, 'l')
		counts := strconv.Itoa(d.Attributes) + " attributes, " + strconv.Itoa(d.Facts) + " facts"
		c.text(modelCounts, c.fit(modelCounts, counts, modelBoxW-16), r.Min.X+8, r.Min.Y+46, 'l')
	}
	note := ""
	switch {
	case len(datasets) == 0:
		note = "No datasets"
	case len(datasets) > len(shown):
		note = strconv.Itoa(len(datasets)-len(shown)) + " more datasets are not drawn"
	}
	if note != "" {
		c.text(noteStyle, note, modelMargin, height-12, 'l')
	}
	if err := encodePNG(w, c.img); err != nil {
		return fmt.Errorf("encode PNG: %w", err)
	}
	return nil
}
