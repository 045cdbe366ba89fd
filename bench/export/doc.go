// Command export measures report export twice over: the renderers alone on a
// report made in memory, and the whole path a user waits for on a Herald
// started in-process with generated data. The report in memory is the one
// Herald computes from that data (the same title, headers, formats and
// values), so both sides write the same content: the command prints both
// files' sizes.
//
// The reports have two row attributes (region and customer) and three metrics
// (revenue, orders, margin): a 100,000-row XLSX and CSV, a 10,000-row PDF and
// a PNG bar chart. The whole path of a file is POST /svc/xtab2/executor3, POST
// /svc/exporter/executor, GETs of the returned URI every -poll until it
// answers 200, and the file it answers written to disk; it is timed from the
// execute request until the file is closed, and the file is then checked
// (XLSX opened with excelize and its rows counted, CSV records counted, PDF
// header, trailer and pages, PNG decoded).
//
// Herald keeps the result of an execution and answers an equal execution at
// the same data version with it; exports are rendered anew every time. So the
// whole path is measured on a new result (a metric alias new to each run
// makes the execution differ, and the query runs) and on a cached one (the
// same definition again: only the export is rendered).
//
//	go run ./bench/export [-runs 3] [-rows 100000] [-pdf-rows 10000]
//
// The renderers alone are also Go benchmarks, built with the bench tag only
// so that go test ./... does not link the whole service to run none of them:
//
//	go test -tags bench -run '^$' -bench . -benchtime 3x -benchmem ./bench/export
package main
