//go:build !linux

package main

import (
	"syscall"
	"time"
)

// childProcAttr is nothing here: only Linux kills a child with its parent.
func childProcAttr() *syscall.SysProcAttr { return nil }

// processCPUTime is not read here.
func processCPUTime() (time.Duration, bool) { return 0, false }
