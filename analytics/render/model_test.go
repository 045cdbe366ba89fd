package render

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func modelPNG(t *testing.T, ds []ModelDataset) image.Image {
	t.Helper()
	var b bytes.Buffer
	if err := ModelPNG(&b, ds); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return img
}

func rgba(c color.Color) color.RGBA { return color.RGBAModel.Convert(c).(color.RGBA) }

// TestModelPNGDrawsABoxPerDataset: three datasets on a 2×2 grid, each box filled in its
// colour, and the reference from the first to the third drawn between them.
func TestModelPNGDrawsABoxPerDataset(t *testing.T) {
	t.Parallel()
	img := modelPNG(t, []ModelDataset{
		{Title: "Sales", Attributes: 1, Facts: 1, References: []int{1, 2}},
		{Title: "Stores", Attributes: 1},
		{Title: "Sold On", Date: true},
	})
	wantW := 2*modelMargin + 2*modelBoxW + modelGap
	if got := img.Bounds().Dx(); got != wantW {
		t.Fatalf("width %d, want %d", got, wantW)
	}
	inside := func(i int) image.Point { // below the text, inside the box
		x, y := modelMargin+(i%2)*(modelBoxW+modelGap), modelMargin+(i/2)*(modelBoxH+modelGap)
		return image.Pt(x+modelBoxW-6, y+modelBoxH-6)
	}
	for i, want := range []color.RGBA{modelFill, modelFill, modelDateFill} {
		if got := rgba(img.At(inside(i).X, inside(i).Y)); got != want {
			t.Errorf("box %d filled %v, want %v", i, got, want)
		}
	}
	// The line from Sales (top left) down to Sold On (bottom left) crosses the gap.
	x := modelMargin + modelBoxW/2
	y := modelMargin + modelBoxH + modelGap/2
	if got := rgba(img.At(x, y)); got == rgba(color.White) {
		t.Errorf("no reference line at (%d, %d)", x, y)
	}
	// Sales references Stores, beside it.
	if got := rgba(img.At(modelMargin+modelBoxW+modelGap/2, modelMargin+modelBoxH/2)); got == rgba(color.White) {
		t.Errorf("no line from Sales to Stores")
	}
}

func TestModelPNGEmptyAndBounded(t *testing.T) {
	t.Parallel()
	if img := modelPNG(t, nil); img.Bounds().Dx() != 2*modelMargin+modelBoxW {
		t.Errorf("an empty model: %v", img.Bounds())
	}
	many := make([]ModelDataset, MaxModelDatasets+10)
	for i := range many {
		many[i] = ModelDataset{Title: "D", References: []int{-1, i, len(many) + 5, (i + 1) % len(many)}}
	}
	img := modelPNG(t, many)
	if img.Bounds().Dx() > 2*modelMargin+8*(modelBoxW+modelGap) {
		t.Errorf("%d datasets drew %v", len(many), img.Bounds())
	}
}
