package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"regexp"

	"github.com/xuri/excelize/v2"

	"github.com/heraldhq/herald/analytics/render"
)

// verify checks a downloaded file: it opens as its format and holds the
// report's rows (pages, for a PDF). It returns what it found.
func verify(path string, f file) (string, error) {
	switch f.format {
	case render.FormatXLS:
		return verifyXLSX(path, f.rows)
	case render.FormatCSV:
		return verifyCSV(path, f.rows)
	case render.FormatPDF:
		return verifyPDF(path)
	case render.FormatPNG:
		return verifyPNG(path)
	}
	return "", fmt.Errorf("unknown format %q", f.format)
}

// verifyXLSX opens the workbook with excelize and counts the rows under the
// header row (the one that begins with "Region").
func verifyXLSX(path string, want int) (string, error) {
	x, err := excelize.OpenFile(path)
	if err != nil {
		return "", err
	}
	defer x.Close()
	rows, err := x.Rows(x.GetSheetName(0))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	all, data, header := 0, 0, false
	for rows.Next() {
		cols, err := rows.Columns()
		if err != nil {
			return "", err
		}
		all++
		switch {
		case header && len(cols) > 0:
			data++
		case len(cols) > 0 && cols[0] == "Region":
			header = true
		}
	}
	if err := rows.Error(); err != nil {
		return "", err
	}
	if data != want {
		return "", fmt.Errorf("XLSX: %d data rows, want %d", data, want)
	}
	return fmt.Sprintf("excelize: %d rows, %d under the header", all, data), nil
}

// verifyCSV reads every record and expects a header row and the report's rows.
func verifyCSV(path string, want int) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	r := csv.NewReader(in)
	r.ReuseRecord = true
	n := 0
	for {
		_, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		n++
	}
	if n != want+1 {
		return "", fmt.Errorf("CSV: %d records, want a header and %d rows", n, want)
	}
	return fmt.Sprintf("%d records: a header and %d rows", n, n-1), nil
}

// pdfPage is a page object of a PDF (not the /Pages tree).
var pdfPage = regexp.MustCompile(`/Type\s*/Page\b`)

// verifyPDF checks the header and trailer and counts the pages.
func verifyPDF(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data[max(0, len(data)-64):], []byte("%%EOF")) {
		return "", errors.New("PDF: no %PDF- header or %%EOF trailer")
	}
	pages := len(pdfPage.FindAll(data, -1))
	if pages == 0 {
		return "", errors.New("PDF: no pages")
	}
	return fmt.Sprintf("%%PDF, %d pages", pages), nil
}

// verifyPNG decodes the image.
func verifyPNG(path string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	img, err := png.Decode(in)
	if err != nil {
		return "", err
	}
	b := img.Bounds()
	return fmt.Sprintf("PNG %d×%d", b.Dx(), b.Dy()), nil
}
