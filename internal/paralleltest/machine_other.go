//go:build !unix

package paralleltest

import "testing"

// lockMachine does nothing where there is no flock: the tests run as they
// come.
func lockMachine(testing.TB, bool) {}
