package apptest

import "syscall"

// childProcAttr has the kernel kill a child when the test binary dies
// without running its cleanups (a -timeout panic, say), so that no server
// outlives the test that started it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
