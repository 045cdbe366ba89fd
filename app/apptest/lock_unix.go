//go:build unix

package apptest

import (
	"os"
	"syscall"
)

// lockFile waits for an exclusive lock on the file at path, creating it, and
// returns its release. The lock goes with the process that holds it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
