// Package numfmt formats metric values with the platform's number formats,
// the Excel-style patterns such as `#,##0.00`, `0.0%` or `$#,##0`, and maps a
// pattern to the number format code an XLSX cell carries.
package numfmt
