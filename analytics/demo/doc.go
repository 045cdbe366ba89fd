// Package demo sets up the demo project: a model of sales of products in regions, two
// years of daily data, metrics (revenue, orders, average order value, a region's share)
// and reports ready to execute, all through the analytics service as a user would.
package demo
