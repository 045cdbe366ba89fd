package scratch

import (
	"errors"

	"golang.org/x/sys/unix"
)

// roomIn says whether dir is on a tmpfs with at least n bytes free.
func roomIn(dir string, n uint64) bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return false
	}
	return fs.Type == unix.TMPFS_MAGIC && fs.Bavail*uint64(fs.Bsize) >= n
}

// running says whether process pid still runs: a signal 0 reaches it, or
// is refused it, rather than finding no such process.
func running(pid int) bool {
	return !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}
