// Package numfmt formats metric values with the platform's number formats,
// the Excel-style patterns such as `#,##0.00`, `0.0%`, `$#,##0`, `# ?/?` or
// `yyyy-mm-dd hh:mm`, tells the colour a pattern's [Red] or [Color10] gives a
// value, and maps a pattern to the number format code an XLSX cell carries.
//
// A pattern has up to four ;-separated sections, chosen by sign or by
// [>=1000]-style conditions. A section is a number section (digit
// placeholders, thousands separators and scaling, percent, scientific
// notation, fractions) or, when it has date or time codes and no digit
// placeholders, a date section, which reads the value as an Excel serial
// date. Format writes the text; Color the colour of the same section.
package numfmt
