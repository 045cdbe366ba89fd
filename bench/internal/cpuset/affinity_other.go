//go:build !linux

package cpuset

import "errors"

// errNoAffinity is why the processes are not pinned here.
var errNoAffinity = errors.New("processes are pinned to CPUs on Linux only, so the server and the load share the CPUs")

// Allowed fails: CPU affinity is not read here.
func Allowed() ([]int, error) { return nil, errNoAffinity }

// pinProcess fails: CPU affinity is not set here.
func pinProcess([]int) error { return errNoAffinity }
