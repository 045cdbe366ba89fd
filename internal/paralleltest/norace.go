//go:build !race

package paralleltest

const race = false
