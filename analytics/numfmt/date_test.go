package numfmt

import (
	"math"
	"testing"
)

// serial is 2023-03-15 (a Wednesday) as an Excel serial date.
const serial = 45000

// at is serial at h:m:s on the clock.
func at(h, m int, s float64) float64 {
	return serial + (float64(h)*3600+float64(m)*60+s)/86400
}

func TestFormatDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		v       float64
		want    string
	}{
		{"iso date", "yyyy-mm-dd", serial, "2023-03-15"},
		{"short", "d/m/yy", serial, "15/3/23"},
		{"one y is two digits", "y", serial, "23"},
		{"three y are four digits", "yyy", serial, "2023"},
		{"long", "dddd, mmmm d, yyyy", serial, "Wednesday, March 15, 2023"},
		{"abbreviated", "ddd mmm dd", serial, "Wed Mar 15"},
		{"month letter", "mmmmm", serial, "M"},
		{"upper case codes", "DD.MM.YYYY", serial, "15.03.2023"},
		{"quoted text", `d "de" mmmm`, serial, "15 de March"},
		{"non-ASCII text", "yyyy年m月d日", serial, "2023年3月15日"},
		{"date and time", "yyyy-mm-dd hh:mm:ss", at(18, 5, 9), "2023-03-15 18:05:09"},
		{"m after h is minutes", "m/d/yyyy h:mm", at(7, 4, 0), "3/15/2023 7:04"},
		{"m before s is minutes", "mm:ss", 150.0 / 86400, "02:30"},
		{"mmm after h is a month", "h mmm", at(7, 4, 0), "7 Mar"},
		{"single digit time", "h:m:s", at(7, 4, 3), "7:4:3"},
		{"pm", "h:mm AM/PM", at(18, 0, 0), "6:00 PM"},
		{"midnight", "h:mm AM/PM", serial, "12:00 AM"},
		{"noon", "hh:mm AM/PM", at(12, 0, 0), "12:00 PM"},
		{"morning two digits", "hh:mm AM/PM", at(9, 30, 0), "09:30 AM"},
		{"am/pm as spelled", "h:mm am/pm", at(13, 0, 0), "1:00 pm"},
		{"a/p", "h:mm a/p", at(6, 0, 0), "6:00 a"},
		{"A/P", "h:mmA/P", at(23, 59, 0), "11:59P"},
		{"hundredths", "hh:mm:ss.00", at(12, 0, 1.234), "12:00:01.23"},
		{"milliseconds", "ss.000", at(0, 0, 7.5), "07.500"},
		{"tenths round", "s.0", at(0, 0, 7.96), "8.0"},
		{"seconds round", "h:mm:ss", at(10, 29, 59.6), "10:30:00"},
		{"minutes truncate", "h:mm", at(10, 29, 40), "10:29"},
		{"rounding into the next day", "yyyy-mm-dd hh:mm:ss", serial + 0.999999999, "2023-03-16 00:00:00"},
		{"elapsed hours", "[h]:mm", 1.5, "36:00"},
		{"elapsed hours with seconds", "[h]:mm:ss", 2 + 1.0/86400, "48:00:01"},
		{"elapsed hours padded", "[hh]:mm", 1.0 / 24, "01:00"},
		{"elapsed minutes", "[mm]:ss", 0.05, "72:00"},
		{"elapsed seconds", "[ss]", 0.01, "864"},
		{"elapsed seconds with fraction", "[s].0", 1.26 / 86400, "1.3"},
		{"elapsed seconds padded", "[ss]", 1.0 / 86400, "01"},
		{"elapsed large", "[h]", 2958465, "71003160"},
		{"time of a date", "h:mm", at(14, 45, 0), "14:45"},
		{"day zero", "yyyy-mm-dd", 0, "1900-01-00"},
		{"time only on day zero", "yyyy-mm-dd hh:mm", 0.25, "1900-01-00 06:00"},
		{"first day", "yyyy-mm-dd dddd", 1, "1900-01-01 Sunday"},
		{"Excel's 1900-02-28", "yyyy-mm-dd", 59, "1900-02-28"},
		{"Excel's 1900-02-29", "yyyy-mm-dd", 60, "1900-02-29"},
		{"first of March 1900", "yyyy-mm-dd dddd", 61, "1900-03-01 Thursday"},
		{"last day", "yyyy-mm-dd", 2958465.5, "9999-12-31"},
		{"year 10000", "yyyy-mm-dd", 2958466, "########"},
		{"rounding into the year 10000", "yyyy-mm-dd hh:mm:ss", 2958466 - 1e-7, "########"},
		{"negative", "yyyy-mm-dd", -1, "########"},
		{"negative time", "[h]:mm", -0.5, "########"},
		{"negative in its own section", "yyyy;yyyy", -400, "########"},
		{"negative to a text section", `yyyy-mm-dd;"before"`, -1, "before"},
		{"NaN", "yyyy-mm-dd", math.NaN(), "########"},
		{"infinity", "yyyy-mm-dd", math.Inf(1), "########"},
		{"huge", "h:mm", 1e300, "########"},
		{"conditions", `[<1]h:mm;yyyy-mm-dd`, 0.5, "12:00"},
		{"conditions else", `[<1]h:mm;yyyy-mm-dd`, serial, "2023-03-15"},
		{"colour", "[Red]yyyy", serial, "2023"},
		{"locale bracket", "[$-409]mmmm", serial, "March"},
		// Number sections stay number sections.
		{"unit after digits", `0 "days"`, 5, "5 days"},
		{"letters after digits", "#,##0 hours", 5, "5 hours"},
		{"text with other letters", `0;-0;nothing`, 0, "nothing"},
		{"point and zero is a number", "d.0", 5, "d5.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.v, tt.pattern); got != tt.want {
				t.Errorf("Format(%v, %q) = %q, want %q", tt.v, tt.pattern, got, tt.want)
			}
		})
	}
}

// TestExcelFormatDate: date, time and fraction codes reach the XLSX cell as
// Excel codes, with text quoted where Excel would read it as a code.
func TestExcelFormatDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, want string
	}{
		{"yyyy-mm-dd", "yyyy-mm-dd"},
		{"dddd, mmmm d, yyyy", "dddd, mmmm d, yyyy"},
		{"dd.mm.yyyy", "dd.mm.yyyy"},
		{"[h]:mm:ss.00", "[h]:mm:ss.00"},
		{"h:mm AM/PM", "h:mm AM/PM"},
		{"h:mm a/p", "h:mm a/p"},
		{`d "de" mmmm`, `d "de" mmmm`},
		{"yyyy年m月d日", `yyyy"年"m"月"d"日"`},
		{`[Red][<1]h:mm;[$-409]yyyy-mm-dd`, `[Red][<1]h:mm;[$-409]yyyy-mm-dd`},
		{"# ?/?", "# ?/?"},
		{"# ??/??", "# ??/??"},
		{"?/?", "?/?"},
		{"# ?/8", "# ?/8"},
		{"0 ?/100", "0 ?/100"},
		{`#" and "?/?;(# ?/?)`, `#" and "?/?;(# ?/?)`},
		{"[color03]0", "[Color3]0"},
	}
	for _, tt := range tests {
		if got := ExcelFormat(tt.pattern); got != tt.want {
			t.Errorf("ExcelFormat(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}
