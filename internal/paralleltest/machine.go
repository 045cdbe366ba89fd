package paralleltest

import "testing"

// A Gate orders the tests of one binary; `go test ./...` runs several
// packages' binaries at once, and a test that holds a time (a drill that
// bounds a recovery by the pace it measured before a kill) can be stretched
// by another package's test that loads the machine hard (thousands of
// replicated writes through a three-node cluster). Such a test runs through
// AloneOnMachine and the heavy one through HeavyOnMachine: heavy tests run
// beside each other, never beside an alone one, whatever their packages.
// Both hold a lock on a file in /tmp until the test ends (where there is no
// flock, they do nothing).

// AloneOnMachine waits until no heavy test of any package runs, and keeps
// them from starting until t ends.
func AloneOnMachine(t testing.TB) {
	t.Helper()
	lockMachine(t, true)
}

// HeavyOnMachine waits until no test of any package runs AloneOnMachine, and
// keeps them from starting until t ends.
func HeavyOnMachine(t testing.TB) {
	t.Helper()
	lockMachine(t, false)
}
