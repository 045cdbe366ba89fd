//go:build bench

package main

import (
	"bytes"
	"testing"

	"github.com/heraldhq/herald/analytics/render"
)

// bench runs one renderer b.N times on the report of the whole path over
// customers customers and reports rows per second and the size of the file.
func bench(b *testing.B, customers int, format string) {
	g := report(customers, 2, format == render.FormatPNG)
	rows := 0
	for range g.Rows {
		rows++
	}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := renderTo(&out, format, g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(out.Len()), "bytes/file")
}

func BenchmarkXLSX100k(b *testing.B) { bench(b, 100_000, render.FormatXLS) }

func BenchmarkCSV100k(b *testing.B) { bench(b, 100_000, render.FormatCSV) }

func BenchmarkPDF10k(b *testing.B) { bench(b, 10_000, render.FormatPDF) }

func BenchmarkPNGBarChart(b *testing.B) { bench(b, 100_000, render.FormatPNG) }
