package main

import "syscall"

// childProcAttr has the kernel kill a child when the benchmark dies without
// running its deferred kills (killed itself, say), so that no server
// outlives it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
