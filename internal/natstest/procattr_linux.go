package natstest

import "syscall"

// childProcAttr has the kernel kill a server when the test binary dies
// without running its cleanups (a -timeout panic, say).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
