//go:build !linux

package natstest

import "syscall"

// childProcAttr is nothing here: only Linux kills a child with its parent.
func childProcAttr() *syscall.SysProcAttr { return nil }
