// Package xtab executes reports. A report definition (stored, a report's current one, or
// given inline) is compiled to SQL over the project's warehouse, run off the request path
// with a per-project bound and a timeout, pivoted into a cross-table and kept: the record
// in SQLite, the rows in a file under the data folder. Results are shared by every
// execution of the same compiled report at the same data version, served as pages of
// xtab_data and streamed to the exporter as grids, and removed once they expire.
//
// Evaluate computes a report as an execution does but keeps nothing: it returns the grid
// from memory, for a caller that reads it at once (the engine, evaluating a condition's
// metrics).
package xtab
