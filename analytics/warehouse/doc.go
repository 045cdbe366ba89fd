// Package warehouse keeps the analytics data of each project in a DuckDB database file,
// <dir>/<project>.duckdb, attached on demand to one DuckDB instance shared by all projects
// (idle ones are detached, least recently used first). It creates and alters the tables
// of the logical data model, loads CSV data into them through a checked staging table, all
// or nothing, and lists attribute elements.
//
// A dataset's table lives in the project database's main schema under its physical name.
// Element ids are stable across loads: the values of an INT or BIGINT key are its element
// ids; any other key column has a lookup table herald."<table>.<column>" (id BIGINT, key)
// that numbers each distinct key value when it is first loaded, in key order, and keeps
// the number. A filter on elements therefore compiles to key IN (?, ...) or to
// key IN (SELECT key FROM lookup WHERE id IN (?, ...)), with the ids bound as parameters.
// The elements of a date dimension need no lookup: their ids are computed from the date
// (DateID, DateLabel and ldm.DatePart).
package warehouse
