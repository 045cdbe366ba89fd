// Package render writes an executed report (a grid.Grid) as CSV, an XLSX
// workbook, a PDF document or a PNG chart. Every renderer reads the rows once
// as they stream, so a large report is never held in memory as a whole; the
// fonts come embedded from Go modules, not from the system. A workbook's
// data rows are formatted here in excelize's own form and deflated on a
// second goroutine while the next are formatted (xlsx_rows.go, xlsx_pipe.go);
// the rest of the workbook is excelize's.
package render
