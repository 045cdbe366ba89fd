// Package export benchmarks the report renderers on generated reports of two
// row attributes and three metrics: a 100,000-row XLSX and CSV, a 10,000-row
// PDF and a PNG chart.
//
//	go test -run '^$' -bench . -benchtime 3x ./bench/export
package export
