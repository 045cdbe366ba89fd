package scratch

import (
	"fmt"
	"os"
)

// memory is where Linux keeps a tmpfs for every user.
const memory = "/dev/shm"

// InMemory points TMPDIR, which t.TempDir and the processes the tests start
// use, at a new folder under /dev/shm when it is a tmpfs with at least
// minFree bytes free and TMPDIR is not set: a TMPDIR of the user's own is
// kept. A TestMain calls it before m.Run and calls the returned remove after.
func InMemory(minFree uint64) (remove func()) {
	if os.Getenv("TMPDIR") != "" || !roomIn(memory, minFree) {
		return func() {}
	}
	dir, err := os.MkdirTemp(memory, "herald-test-")
	if err != nil {
		return func() {}
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		panic(fmt.Sprintf("scratch: %v", err))
	}
	return func() {
		os.Unsetenv("TMPDIR")
		os.RemoveAll(dir)
	}
}
