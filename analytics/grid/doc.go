// Package grid is the shape of an executed report as the renderers see it: a
// title, header levels and rows streamed one at a time, so a large report is
// never held in memory as a whole.
package grid
