//go:build race

package paralleltest

// race says the binary runs under the race detector, where tests compute
// more than they wait.
const race = true
