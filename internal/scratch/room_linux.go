package scratch

import "golang.org/x/sys/unix"

// roomIn says whether dir is on a tmpfs with at least n bytes free.
func roomIn(dir string, n uint64) bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return false
	}
	return fs.Type == unix.TMPFS_MAGIC && fs.Bavail*uint64(fs.Bsize) >= n
}
