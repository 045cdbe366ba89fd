//go:build unix

package paralleltest

import (
	"os"
	"syscall"
	"testing"
)

// TestMachineLockKeepsAloneAndHeavyApart: while a test runs alone on the
// machine no heavy test may start, heavy tests run beside each other, and
// none may start alone beside them; a lock is free again once its test ends.
func TestMachineLockKeepsAloneAndHeavyApart(t *testing.T) {
	was := machineLock
	machineLock = t.TempDir() + "/lock" // not the lock of the tests running now
	t.Cleanup(func() { machineLock = was })
	t.Run("alone", func(t *testing.T) {
		AloneOnMachine(t)
		if tryLock(t, false) {
			t.Error("a heavy test could start beside an alone one")
		}
	})
	if !tryLock(t, true) {
		t.Fatal("the lock of an ended alone test is still held")
	}
	t.Run("heavy", func(t *testing.T) {
		HeavyOnMachine(t)
		if !tryLock(t, false) {
			t.Error("a second heavy test could not start beside the first")
		}
		if tryLock(t, true) {
			t.Error("an alone test could start beside a heavy one")
		}
	})
	if !tryLock(t, true) {
		t.Fatal("the lock of an ended heavy test is still held")
	}
}

// tryLock reports whether the machine's lock could be taken at once, and
// lets it go again.
func tryLock(t *testing.T, exclusive bool) bool {
	t.Helper()
	f, err := os.OpenFile(machineLock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	switch err := syscall.Flock(int(f.Fd()), how); err {
	case nil:
		return true
	case syscall.EWOULDBLOCK:
		return false
	default:
		t.Fatal(err)
		return false
	}
}
