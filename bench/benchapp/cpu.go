package benchapp

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used so far, user and system, or 0
// when the kernel will not say.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
