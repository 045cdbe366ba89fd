// Package maql parses MAQL, the model-definition and metric language of the analytics API.
// ParseScript turns a DDL script into typed statements for the logical data model to apply, and
// ParseMetric turns a metric expression into a syntax tree that can be resolved, stored and
// compiled to SQL; both print back to canonical MAQL text.
package maql
