// Package render writes an executed report (a grid.Grid) as CSV, an XLSX
// workbook, a PDF document or a PNG chart. Every renderer reads the rows once
// as they stream, so a large report is never held in memory as a whole; the
// fonts come embedded from Go modules, not from the system.
package render
