// Package revenue is the execute benchmark's report, revenue by region and
// product, as rows: read from a data result as Herald's API answers it
// (XTab) or from a hand-written SQL query (Scan), and compared row by row to
// the cent (Same), so that every side the benchmark times is shown to give
// the same result.
package revenue
