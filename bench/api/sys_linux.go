package main

import "syscall"

// childProcAttr has the kernel kill the load generator when the benchmark
// dies without waiting for it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
