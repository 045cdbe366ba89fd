package numfmt

import (
	"strings"
	"unicode/utf8"
)

// ExcelFormat returns the number format code an XLSX cell uses to show values
// formatted with pattern. It is mostly pattern itself: "General" for an empty
// pattern, without the platform-only parts Excel refuses ([=null] sections,
// [color=#...] styling), with colour names in Excel's spelling and literal
// text quoted where Excel would read it as a format code. Fraction, date and
// time codes stay as they are, so the cell shows what Format writes.
func ExcelFormat(pattern string) string {
	if strings.TrimSpace(pattern) == "" {
		return "General"
	}
	var parts []string
	for _, p := range splitSections(pattern) {
		sec := parseSection(p)
		if sec.null {
			continue
		}
		var b strings.Builder
		prevDate, gap := false, false
		for _, t := range sec.toks {
			if t.kind == tDropped {
				gap = true
				continue
			}
			if gap && prevDate && t.kind == tDate {
				b.WriteString(`""`) // s[]s is two codes, not ss
			}
			b.WriteString(t.raw)
			prevDate, gap = t.kind == tDate, false
		}
		parts = append(parts, b.String())
	}
	if len(parts) == 0 {
		return "General"
	}
	out := strings.Join(parts, ";")
	if strings.TrimSpace(out) != "" {
		return out
	}
	// Blank codes read as General; spell out what the pattern prints.
	for i, p := range parts {
		if p != "" {
			parts[i] = `"` + p + `"`
		}
	}
	if out = strings.Join(parts, ";"); out == "" {
		return ";;;" // a pattern that prints nothing
	}
	return out
}

// excelSafe are the literal characters Excel shows without quotes.
const excelSafe = "$-+/():!^&'~{}<>= "

// quote writes literal text so that Excel shows it as is.
func quote(s string) string { return quoteWith(s, excelSafe) }

// quoteWith writes literal text so that Excel shows it as is, leaving the
// characters of safe unquoted.
func quoteWith(s, safe string) string {
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size]
		i += size
		switch {
		case r == '"':
			if inQuote {
				b.WriteByte('"')
				inQuote = false
			}
			b.WriteString(`\"`)
		case r < 0x80 && strings.ContainsRune(safe, r):
			if inQuote {
				b.WriteByte('"')
				inQuote = false
			}
			b.WriteString(raw)
		default:
			if !inQuote {
				b.WriteByte('"')
				inQuote = true
			}
			b.WriteString(raw)
		}
	}
	if inQuote {
		b.WriteByte('"')
	}
	return b.String()
}
