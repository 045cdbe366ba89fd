package render

import (
	"sync"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
)

// The Go fonts cover Latin, Latin Extended-A, Greek and Cyrillic, so
// "Žluťoučký kůň" prints the same on every machine.
var (
	regularTTF = goregular.TTF
	boldTTF    = gobold.TTF
)

// parsedFonts are the fonts for drawing charts, parsed once.
var parsedFonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	var fonts [2]*opentype.Font
	for i, ttf := range [][]byte{regularTTF, boldTTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return fonts, err
		}
		fonts[i] = f
	}
	return fonts, nil
})
