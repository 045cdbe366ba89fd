//go:build unix

package app

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// privateFiles makes every file and folder the process creates from now on private to
// its user (0600 and 0700), whichever library creates it: SQLite, DuckDB, NATS.
func privateFiles() { syscall.Umask(0o077) }

// lockFolder takes an exclusive lock on the data folder for as long as the process
// lives, so that no second process works on it: a Herald that finds runs left running
// there knows their process is gone.
func lockFolder(dir string) (release func() error, err error) {
	f, err := os.OpenFile(filepath.Join(dir, "herald.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another Herald process is using %s", dir)
	}
	return f.Close, nil
}
