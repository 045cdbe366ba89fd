package numfmt

import (
	"strconv"
	"strings"
)

// Color returns the CSS colour ("#rrggbb") of the section that formats v, or
// "" when that section names none. [Red], [Blue], …, and [Color1]…[Color56]
// (Excel's default palette) are known.
//
// It picks the section as Format does, conditions and the negative and zero
// sections included, so the text and its colour always come from the same
// section; NaN and ±Inf, which Format writes as NaN, Inf and -Inf in a number
// section, take the colour of the section they fall in. A section with more
// than one colour uses the first. The platform's [color=#...] styling is not
// a colour here: Excel does not know it, and an XLSX cell could not show it.
func Color(v float64, pattern string) string {
	if strings.TrimSpace(pattern) == "" {
		return ""
	}
	sec, _ := choose(compile(pattern), v)
	if sec == nil {
		return ""
	}
	return sec.color
}

// excelColors are the colour names of Excel's number formats, in Excel's
// spelling, with their colours.
var excelColors = []struct{ name, css string }{
	{"Black", "#000000"},
	{"Blue", "#0000ff"},
	{"Cyan", "#00ffff"},
	{"Green", "#00ff00"},
	{"Magenta", "#ff00ff"},
	{"Red", "#ff0000"},
	{"White", "#ffffff"},
	{"Yellow", "#ffff00"},
}

// palette is Excel's default palette of 56 colours: [Color1] is palette[0].
var palette = [56]string{
	"#000000", "#ffffff", "#ff0000", "#00ff00", "#0000ff", "#ffff00", "#ff00ff", "#00ffff",
	"#800000", "#008000", "#000080", "#808000", "#800080", "#008080", "#c0c0c0", "#808080",
	"#9999ff", "#993366", "#ffffcc", "#ccffff", "#660066", "#ff8080", "#0066cc", "#ccccff",
	"#000080", "#ff00ff", "#ffff00", "#00ffff", "#800080", "#800000", "#008080", "#0000ff",
	"#00ccff", "#ccffff", "#ccffcc", "#ffff99", "#99ccff", "#ff99cc", "#cc99ff", "#ffcc99",
	"#3366ff", "#33cccc", "#99cc00", "#ffcc00", "#ff9900", "#ff6600", "#666699", "#969696",
	"#003366", "#339966", "#003300", "#333300", "#993300", "#993366", "#333399", "#333333",
}

// excelColor returns the Excel spelling of a colour bracket, or "".
func excelColor(b string) string {
	for _, c := range excelColors {
		if strings.EqualFold(b, c.name) {
			return c.name
		}
	}
	if n := paletteIndex(b); n > 0 {
		return "Color" + strconv.Itoa(n) // [color03] is [Color3]
	}
	return ""
}

// paletteIndex returns n for a [ColorN] bracket with n from 1 to 56, else 0.
func paletteIndex(b string) int {
	if len(b) <= 5 || !strings.EqualFold(b[:5], "color") {
		return 0
	}
	n, err := strconv.Atoi(b[5:])
	if err != nil || n < 1 || n > len(palette) {
		return 0
	}
	return n
}

// cssColor returns the CSS colour of an Excel colour name as excelColor
// spells it.
func cssColor(name string) string {
	for _, c := range excelColors {
		if name == c.name {
			return c.css
		}
	}
	if n := paletteIndex(name); n > 0 {
		return palette[n-1]
	}
	return ""
}
