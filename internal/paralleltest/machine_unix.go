//go:build unix

package paralleltest

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// machineLock is the file the locks are held on, one per user. It is not in
// the temporary folder: a package's TestMain may give its binary a folder of
// its own (internal/scratch does), and the binaries must share the file.
var machineLock = "/tmp/herald-tests-" + strconv.Itoa(os.Getuid()) + ".lock"

// lockMachine takes the machine's lock, exclusive or shared, until t ends.
func lockMachine(t testing.TB, exclusive bool) {
	t.Helper()
	f, err := os.OpenFile(machineLock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("the machine's test lock: %v", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("the machine's test lock: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing the file lets the lock go
}
