// Package analytics is the analytics side of a project: its logical data model changed by
// MAQL scripts, its data loaded from CSV into the DuckDB warehouse, and the metadata objects
// reports are made of (metrics, report definitions, reports) beside the model's own objects
// (datasets, attributes, labels, facts, folders). The model and the objects are kept in the
// store; the data in the warehouse; a model change commits both or neither.
package analytics
