// Package query compiles a report (the attributes it is broken down by, its metrics and its
// filters) over a project's logical data model into one DuckDB SQL query, with every value
// that comes from a user bound as a parameter. Each aggregation runs on its fact's table at
// the level its BY clauses leave, with the attributes reached through reference columns;
// aggregations that share a table and a level share one GROUP BY, and those at a coarser
// level (BY ALL) are joined back to the report's rows on the keys they keep.
package query
