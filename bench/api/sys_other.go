//go:build !linux

package main

import (
	"errors"
	"syscall"
	"time"
)

// errNoAffinity is why the processes are not pinned here.
var errNoAffinity = errors.New("processes are pinned to CPUs on Linux only, so the server and the load share the CPUs")

// childProcAttr is nothing here: only Linux kills a child with its parent.
func childProcAttr() *syscall.SysProcAttr { return nil }

// processCPUTime is not read here.
func processCPUTime() (time.Duration, bool) { return 0, false }

// processCPUs fails: CPU affinity is not read here.
func processCPUs() ([]int, error) { return nil, errNoAffinity }

// pinProcess fails: CPU affinity is not set here.
func pinProcess([]int) error { return errNoAffinity }
