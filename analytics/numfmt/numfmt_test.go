package numfmt

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		v       float64
		want    string
	}{
		{"grouped two decimals", "#,##0.00", 1234.567, "1,234.57"},
		{"grouped negative", "#,##0.00", -1234.567, "-1,234.57"},
		{"grouped large", "#,##0.00", 1234567.891, "1,234,567.89"},
		{"grouped integer rounds half up", "#,##0", 1234567.5, "1,234,568"},
		{"grouped integer small", "#,##0", 12, "12"},
		{"grouped integer zero", "#,##0", 0, "0"},
		{"grouped 1e15", "#,##0", 1e15, "1,000,000,000,000,000"},
		{"one decimal carries", "#,##0.0", 999.95, "1,000.0"},
		{"one decimal", "#,##0.0", 3.14159, "3.1"},
		{"half away from zero on the decimal form", "0.00", 2.675, "2.68"},
		{"half away from zero 1.005", "0.00", 1.005, "1.01"},
		{"half away from zero tie", "0.00", 0.125, "0.13"},
		{"half away from zero negative", "0", -2.5, "-3"},
		{"half up", "0", 2.5, "3"},
		{"half of one", "0", 0.5, "1"},
		{"small rounds up into the last place", "#,##0.00", 0.005, "0.01"},
		{"tiny is zero", "0.000", 1e-10, "0.000"},
		{"negative rounding to zero has no sign", "#,##0", -0.4, "0"},
		{"negative zero", "0.00", math.Copysign(0, -1), "0.00"},
		{"negative keeps zeros", "0.00", -2.5, "-2.50"},
		{"percent", "0.0%", 0.1234, "12.3%"},
		{"percent negative half", "0.0%", -0.0005, "-0.1%"},
		{"percent whole", "0%", 0.5, "50%"},
		{"percent grouped", "#,##0.00%", 12.3456, "1,234.56%"},
		{"currency prefix", "$#,##0.00", 1234.5, "$1,234.50"},
		{"currency prefix negative", "$#,##0.00", -1234.5, "-$1,234.50"},
		{"quoted suffix", `#,##0.00" USD"`, 5, "5.00 USD"},
		{"quoted prefix", `"Total: "#,##0`, 4200, "Total: 4,200"},
		{"unquoted suffix", "#,##0 Kč", 1500, "1,500 Kč"},
		{"escaped literal", `\$0`, 5, "$5"},
		{"quoted percent does not scale", `0"%"`, 5, "5%"},
		{"thousands scaling", `#,##0.0,"K"`, 12345, "12.3K"},
		{"millions scaling", `#,##0.0,,"M"`, 1234567, "1.2M"},
		{"conditions millions", `[>=1000000]#,##0.0,,"M";[>=1000]#,##0.0,"K";#,##0`, 1234567, "1.2M"},
		{"conditions thousands", `[>=1000000]#,##0.0,,"M";[>=1000]#,##0.0,"K";#,##0`, 12345, "12.3K"},
		{"conditions else", `[>=1000000]#,##0.0,,"M";[>=1000]#,##0.0,"K";#,##0`, 999, "999"},
		{"conditions negative else", `[>=1000000]#,##0.0,,"M";[>=1000]#,##0.0,"K";#,##0`, -5000, "-5,000"},
		{"negative-only condition writes its sign", `[<0](0);0`, -7, "(7)"},
		{"negative section", "#,##0.00;(#,##0.00)", -3, "(3.00)"},
		{"negative section positive", "#,##0.00;(#,##0.00)", 3, "3.00"},
		{"zero section", `#,##0;-#,##0;"zero"`, 0, "zero"},
		{"empty negative section hides", "0;", -1, ""},
		{"colour", "[Red]#,##0", 5, "5"},
		{"platform colour", "[color=#ff0000]#,##0", 5, "5"},
		{"null section skipped", "[=null]--;#,##0.00", 3, "3.00"},
		{"null section negative", "[=null]--;#,##0.00;(#,##0.00)", -3, "(3.00)"},
		{"scientific", "0.00E+00", 12345, "1.23E+04"},
		{"scientific small", "0.00E+00", 0.000123, "1.23E-04"},
		{"scientific zero", "0.00E+00", 0, "0.00E+00"},
		{"scientific carry", "0.0E+0", 9.96, "1.0E+1"},
		{"scientific negative", "0.0E-00", -1234, "-1.2E03"},
		{"optional digits", "#.##", 0.5, ".5"},
		{"optional digits trailing point", "#.##", 1, "1."},
		{"optional zero hides", "#,###", 0, ""},
		{"leading zeros", "00000", 42, "00042"},
		{"question marks", "0.0??", 1.5, "1.5  "},
		{"spacing", "_(#,##0_)", 5, " 5 "},
		{"fill ignored", "*-0", 5, "5"},
		{"locale currency", "[$€-407] #,##0.00", 3, "€ 3.00"},
		{"no placeholders", `"n/a"`, 3, "n/a"},
		{"general", "General", 12.5, "12.5"},
		{"general negative", "General", -12.5, "-12.5"},
		{"empty pattern", "", 1234567, "1234567"},
		{"empty pattern fraction", "", 0.1, "0.1"},
		{"empty pattern negative", "", -2.5, "-2.5"},
		{"empty pattern large", "", 1e21, "1e+21"},
		{"empty pattern tiny", "", 1e-7, "1e-07"},
		{"empty pattern negative zero", "", math.Copysign(0, -1), "0"},
		{"NaN", "#,##0", math.NaN(), "NaN"},
		{"infinity", "#,##0", math.Inf(-1), "-Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.v, tt.pattern); got != tt.want {
				t.Errorf("Format(%v, %q) = %q, want %q", tt.v, tt.pattern, got, tt.want)
			}
		})
	}
}

func TestExcelFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		want    string
	}{
		{"empty", "", "General"},
		{"blank", "  ", "General"},
		{"grouped", "#,##0.00", "#,##0.00"},
		{"percent", "0.0%", "0.0%"},
		{"currency", "$#,##0.00", "$#,##0.00"},
		{"quoted suffix", `#,##0.00" USD"`, `#,##0.00" USD"`},
		{"unquoted letters are quoted", "#,##0 Kč", `#,##0 "Kč"`},
		{"escaped dollar", `\$0`, "$0"},
		{"quoted literals kept", `0"a""b"`, `0"a""b"`},
		{"escaped quote", `0\"`, `0\"`},
		{"unterminated quote closed", `0"abc`, `0"abc"`},
		{"scaling and conditions", `[>=1000]#,##0.0,"K";#,##0`, `[>=1000]#,##0.0,"K";#,##0`},
		{"null section dropped", `[=null]--;[>=1000]#,##0.0,"K";#,##0`, `[>=1000]#,##0.0,"K";#,##0`},
		{"platform colour dropped", "[color=#ff0000]#,##0", "#,##0"},
		{"colour spelling", "[red]0.0%;[BLUE]-0.0%", "[Red]0.0%;[Blue]-0.0%"},
		{"locale currency kept", "[$€-407] #,##0.00", "[$€-407] #,##0.00"},
		{"only null", "[=null]--", "General"},
		{"nothing left", "[color=#fff]", ";;;"},
		{"spacing kept", "_(#,##0_)", "_(#,##0_)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExcelFormat(tt.pattern); got != tt.want {
				t.Errorf("ExcelFormat(%q) = %q, want %q", tt.pattern, got, tt.want)
			}
		})
	}
}

// FuzzFormat checks that no pattern makes Format, Color, ExcelFormat or Axis
// panic, that the text stays within a bound set by the pattern's length,
// that Color names a CSS colour or none, that the Excel code formats and
// colours like the pattern it came from, and that the plain form reads back
// exactly.
func FuzzFormat(f *testing.F) {
	seeds := []string{"", "#,##0.00", "#,##0", "#,##0.0", "0.00", "0.0%", "#,##0.00%", "$#,##0.00",
		`#,##0.00" USD"`, `[>=1000000]#,##0.0,,"M";[>=1000]#,##0.0,"K";#,##0`, "#,##0;(#,##0);-",
		"[=null]--;[red]0.00", "0.00E+00", "_(* #,##0_)", `\"0\"`, "[$€-407]#.##?", "General;;;@",
		"# ?/?", "# ??/??", "?/?", "# ?/8", "0 ??/100;[Red](0 ?/?)", `#" "?/?`,
		"yyyy-mm-dd", "dddd, mmmm d, yyyy h:mm AM/PM", "[h]:mm:ss.00", "[mm]:ss;[Red]-[mm]:ss",
		"m/d/yy a/p", "[Red][<0]0.0;[Blue]0.0", "[Color56]0;[color10]-0;[Green]0", `[<1]h:mm;yyyy"年"`}
	for i, s := range seeds {
		f.Add(float64(i)*-1234.5678, s)
		f.Add(45000+float64(i)/7, s)
	}
	f.Add(math.MaxFloat64, "#,##0.0,,,%%%")
	f.Add(math.SmallestNonzeroFloat64, "0.00000000000000000000E+0")
	f.Add(math.MaxFloat64, "?/?%%%")
	f.Add(math.NaN(), "yyyy")
	f.Add(2958465.9999999, "[ss].000")
	f.Fuzz(func(t *testing.T, v float64, pattern string) {
		got := Format(v, pattern)
		if limit := 4*len(pattern) + 1024; len(got) > limit {
			t.Errorf("Format(%v, %q) is %d bytes long, more than %d", v, pattern, len(got), limit)
		}
		if excel := Format(v, ExcelFormat(pattern)); excel != got {
			t.Errorf("Format(%v, %q) = %q, but with its Excel code %q it is %q", v, pattern, got, ExcelFormat(pattern), excel)
		}
		color := Color(v, pattern)
		if !cssPattern.MatchString(color) {
			t.Errorf("Color(%v, %q) = %q, not a CSS colour", v, pattern, color)
		}
		if excel := Color(v, ExcelFormat(pattern)); excel != color {
			t.Errorf("Color(%v, %q) = %q, but with its Excel code %q it is %q", v, pattern, color, ExcelFormat(pattern), excel)
		}
		Format(v, Axis(pattern, math.Abs(v)))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		back, err := strconv.ParseFloat(Format(v, ""), 64)
		if err != nil || back != v {
			t.Errorf("plain form of %v is %q (read back %v, %v)", v, Format(v, ""), back, err)
		}
	})
}

// cssPattern matches what Color returns: a CSS colour or nothing.
var cssPattern = regexp.MustCompile(`^(#[0-9a-f]{6})?$`)

func TestAxis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		step    float64
		want    string
	}{
		{"drops decimals for whole steps", "$#,##0.00", 500000, "$#,##0"},
		{"percent whole", "0.0%", 0.05, "0%"},
		{"percent half", "0.0%", 0.025, "0.0%"},
		{"adds decimals for small steps", "#,##0", 0.25, "#,##0.00"},
		{"noise in the step", "#,##0", 0.1 + 0.2, "#,##0.0"},
		{"thousands scaling", `#,##0.0,"K"`, 5000, `#,##0,"K"`},
		{"thousands scaling needs a decimal", `#,##0,"K"`, 500, `#,##0.0,"K"`},
		{"each section", `#,##0.00;(#,##0.00)`, 10, `#,##0;(#,##0)`},
		{"scientific unchanged", "0.00E+00", 10, "0.00E+00"},
		{"fraction unchanged", "# ?/?", 0.25, "# ?/?"},
		{"date unchanged", "yyyy-mm-dd;0.00", 0.5, "yyyy-mm-dd;0.0"},
		{"empty unchanged", "", 10, ""},
		{"bad step unchanged", "0.00", 0, "0.00"},
		{"leading point", ".00", 1, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Axis(tt.pattern, tt.step); got != tt.want {
				t.Errorf("Axis(%q, %v) = %q, want %q", tt.pattern, tt.step, got, tt.want)
			}
		})
	}
}
