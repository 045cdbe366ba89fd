package numfmt

import (
	"math"
	"strings"
	"testing"
)

func TestColor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		v       float64
		want    string
	}{
		{"single section", "[Red]0.00", 5, "#ff0000"},
		{"single section negative", "[Red]0.00", -5, "#ff0000"},
		{"any case", "[bLuE]0", 5, "#0000ff"},
		{"after a condition", "[>=0][Green]0", 5, "#00ff00"},
		{"condition picks red", "[Red][<0]0.0;[Blue]0.0", -1, "#ff0000"},
		{"condition falls to blue", "[Red][<0]0.0;[Blue]0.0", 1, "#0000ff"},
		{"condition zero falls to blue", "[Red][<0]0.0;[Blue]0.0", 0, "#0000ff"},
		{"second condition", "[Red][>=1000]0;[Magenta][>=10]0;0", 50, "#ff00ff"},
		{"uncoloured fallback", "[Red][>=1000]0;[Magenta][>=10]0;0", 5, ""},
		{"negative section", "0.00;[Red]-0.00", -2, "#ff0000"},
		{"positive of negative section", "0.00;[Red]-0.00", 2, ""},
		{"zero section", "[Black]0;[Red]-0;[Yellow]0", 0, "#ffff00"},
		{"negative zero is zero", "[Black]0;[Red]-0;[Yellow]0", math.Copysign(0, -1), "#ffff00"},
		{"palette first", "[Color1]0", 1, "#000000"},
		{"palette tenth", "[Color10]0", 1, "#008000"},
		{"palette last", "[Color56]0", 1, "#333333"},
		{"palette out of range", "[Color57]0", 1, ""},
		{"first colour wins", "[Cyan][Red]0", 1, "#00ffff"},
		{"null section skipped", "[=null][Red]--;[White]0", 1, "#ffffff"},
		{"platform colour is not Excel's", "[color=#ff0000]0", 1, ""},
		{"date section", "[Blue]yyyy-mm-dd", 45000, "#0000ff"},
		{"fraction section", "# ?/?;[Red]-# ?/?", -1.5, "#ff0000"},
		{"no colour", "#,##0.00", 1, ""},
		{"empty pattern", "", 1, ""},
		{"NaN falls in the first section", "[Red]0;[Blue]0", math.NaN(), "#ff0000"},
		{"-Inf falls in the negative section", "[Red]0;[Blue]0", math.Inf(-1), "#0000ff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Color(tt.v, tt.pattern); got != tt.want {
				t.Errorf("Color(%v, %q) = %q, want %q", tt.v, tt.pattern, got, tt.want)
			}
		})
	}
}

// TestColorMatchesFormat: each section of these patterns has its own colour
// and its own letter, so the letter Format writes tells the section, and
// Color must name that section's colour.
func TestColorMatchesFormat(t *testing.T) {
	t.Parallel()
	colors := map[string]string{"R": "#ff0000", "B": "#0000ff", "G": "#00ff00", "Y": "#ffff00", "M": "#ff00ff"}
	patterns := []string{
		`[Red]"R"0.0;[Blue]"B"0.0`,
		`[Red]"R"0;[Blue]"B"0;[Green]"G"0`,
		`[Red]"R"0;[Blue]"B"0;[Green]"G"0;[Yellow]"Y"@`,
		`[Red][<0]"R"0.0;[Blue]"B"0.0`,
		`[Blue]"B"0.0;[Red][<0]"R"0.0`,
		`[Red][>=1000]"R"0;[Blue][>=10]"B"0;[Green]"G"0`,
		`[Red][<=-10]"R"0;[Blue][>10]"B"0;[Green]"G"0`,
		`[Red][=0]"R"0;[Blue]"B"0`,
		`[Red][<>0]"R"0;[Blue]"B"0`,
		`[Magenta][>100]"M"0;[Green]"G"0;[Blue]"B"0`,
		`[=null]--;[Red]"R"0;[Blue]"B"0;[Green]"G"0`,
		`[Green][<0]"G"0;[Red][<1]"R"h:mm;[Blue]"B"yyyy`,
		`[Red]"R"# ?/?;[Blue]"B"# ?/?`,
	}
	values := []float64{-1e6, -1000, -10.5, -10, -1, -0.4, math.Copysign(0, -1), 0, 0.4, 1, 10, 10.5, 100, 999, 1000, 1e6}
	for _, p := range patterns {
		for _, v := range values {
			text := Format(v, p)
			i := strings.IndexAny(text, "RBGYM")
			if i < 0 {
				t.Errorf("Format(%v, %q) = %q names no section", v, p, text)
				continue
			}
			if got, want := Color(v, p), colors[text[i:i+1]]; got != want {
				t.Errorf("Format(%v, %q) = %q, from the %s section, but Color = %q, want %q", v, p, text, text[i:i+1], got, want)
			}
		}
	}
}
