//go:build !linux

package apptest

import (
	"os"
	"syscall"
)

// killTree kills p; the processes it started are not known here.
func killTree(p *os.Process) { _ = p.Kill() }

// signalTree sends sig to p; the processes it started are not known here.
func signalTree(p *os.Process, sig syscall.Signal) { _ = p.Signal(sig) }
