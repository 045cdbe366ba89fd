package render

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/heraldhq/herald/analytics/grid"
)

// A sheet's data rows are written here as excelize's StreamWriter writes
// them, byte for byte (TestDataRowsAsExcelizeWritesThem holds the two
// equal), without its detour through an interface value, a cell struct and
// a cell name per cell: on a 100,000-row report that detour was most of the
// workbook's time.

// sheetRows appends the data rows of one sheet.
type sheetRows struct {
	attrs  int      // attribute columns, then one per grid column
	num    []int    // style of each grid column
	letter [][]byte // name of each column: A, B, … AA, …
}

func newSheetRows(attrs int, num []int) *sheetRows {
	s := &sheetRows{attrs: attrs, num: num}
	for i := range attrs + len(num) {
		name, _ := excelize.ColumnNumberToName(i + 1)
		s.letter = append(s.letter, []byte(name))
	}
	return s
}

// appendRow appends row n of the sheet, holding r.
func (s *sheetRows) appendRow(b []byte, n int, r grid.Row) []byte {
	b = append(b, `<row r="`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `">`...)
	for i := range s.attrs {
		b = s.appendText(b, i, n, 0, header(r, i))
	}
	for i, style := range s.num {
		if p := value(r, i); p != nil {
			b = s.appendNumber(b, s.attrs+i, n, style, *p)
		}
	}
	return append(b, `</row>`...)
}

// appendCell opens the cell of column col in row n.
func (s *sheetRows) appendCell(b []byte, col, n, style int, typ string) []byte {
	b = append(b, `<c r="`...)
	b = append(b, s.letter[col]...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '"')
	if style != 0 {
		b = append(b, ` s="`...)
		b = strconv.AppendInt(b, int64(style), 10)
		b = append(b, '"')
	}
	if typ != "" {
		b = append(b, ` t="`...)
		b = append(b, typ...)
		b = append(b, '"')
	}
	return append(b, '>')
}

// appendNumber writes v as a number, or as the text excelize gives a value
// that is not one (NaN, ±Inf).
func (s *sheetRows) appendNumber(b []byte, col, n, style int, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return s.appendText(b, col, n, style, fmt.Sprint(v))
	}
	b = s.appendCell(b, col, n, style, "")
	b = append(b, `<v>`...)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	return append(b, `</v></c>`...)
}

// appendText writes v as an inline string: at most excelize.TotalCellChars
// UTF-16 units, its surrounding white space preserved, escaped for XML with
// its line breaks kept, and with what reads as an escaped character
// (_xHHHH_) escaped in turn.
func (s *sheetRows) appendText(b []byte, col, n, style int, v string) []byte {
	b = s.appendCell(b, col, n, style, "inlineStr")
	v = truncateUTF16(v, excelize.TotalCellChars)
	b = append(b, `<is><t`...)
	if v != "" && (isSpace(v[0]) || isSpace(v[len(v)-1])) {
		b = append(b, ` xml:space="preserve"`...)
	}
	b = append(b, '>')
	start := len(b)
	b = appendEscaped(b, v)
	if esc := b[start:]; bytes.Contains(esc, []byte("_x")) && bstr.Match(esc) {
		b = append(b[:start], escapeBSTR(string(esc))...)
	}
	return append(b, `</t></is></c>`...)
}

func isSpace(c byte) bool { return c == '\t' || c == '\n' || c == '\r' || c == ' ' }

// truncateUTF16 cuts v to at most limit UTF-16 code units, at a rune.
func truncateUTF16(v string, limit int) string {
	if len(v) <= limit { // a byte is never fewer than one unit
		return v
	}
	units := 0
	for i, r := range v {
		if units += utf16.RuneLen(r); units > limit {
			return v[:i]
		}
	}
	return v
}

// appendEscaped escapes v as xml.EscapeText does, but for line feeds, which
// stay as they are: invalid UTF-8 and characters XML cannot hold become
// U+FFFD.
func appendEscaped(b []byte, v string) []byte {
	last := 0
	for i := 0; i < len(v); {
		r, width := utf8.DecodeRuneInString(v[i:])
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\r':
			esc = "&#xD;"
		default:
			if r == '\n' || (r != utf8.RuneError || width != 1) && isXMLChar(r) {
				i += width
				continue
			}
			esc = "\uFFFD"
		}
		b = append(b, v[last:i]...)
		b = append(b, esc...)
		i += width
		last = i
	}
	return append(b, v[last:]...)
}

// isXMLChar reports whether r may appear in XML's character data.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

var (
	bstr     = regexp.MustCompile(`_x[a-fA-F\d]{4}_`)
	bstrNext = regexp.MustCompile(`^x[a-fA-F\d]{4}_`) // after an escaped underscore
)

// escapeBSTR escapes in v what a reader would take for an escaped
// character, _xHHHH_, as excelize does: its underscore becomes _x005F_. As
// in excelize, a match naming half of a surrogate pair is left out.
func escapeBSTR(v string) string {
	var out []byte
	cursor := 0
	for _, m := range bstr.FindAllStringIndex(v, -1) {
		out = append(out, v[cursor:m[0]]...)
		match, rest := v[m[0]:m[1]], v[m[1]:]
		cursor = m[1]
		switch {
		case match != "_x005F_":
			if isRuneHex(match[2:6]) {
				out = append(out, "_x005F"+match...)
			}
		case bstrNext.MatchString(rest) && isRuneHex(rest[1:5]):
			out = append(out, "_x005F_x005F_x005F_"...)
		default:
			out = append(out, "_x005F_x005F_"...)
		}
	}
	return string(append(out, v[cursor:]...))
}

// isRuneHex reports whether four hex digits name a character: not one half
// of a surrogate pair.
func isRuneHex(h string) bool {
	n, err := strconv.ParseUint(h, 16, 32)
	return err == nil && utf8.ValidRune(rune(n))
}
