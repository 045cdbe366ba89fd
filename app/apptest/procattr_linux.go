package apptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// killTree kills p and the processes it started with SIGKILL.
func killTree(p *os.Process) { signalTree(p, syscall.SIGKILL) }

// signalTree sends sig to p and the processes it started.
func signalTree(p *os.Process, sig syscall.Signal) {
	kids := children(p.Pid)
	_ = p.Signal(sig)
	for _, pid := range kids {
		_ = syscall.Kill(pid, sig)
	}
}

// children lists the processes pid started that still run.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
