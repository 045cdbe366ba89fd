package scratch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memory is where Linux keeps a tmpfs for every user.
const memory = "/dev/shm"

// prefix begins the name of each folder InMemory makes, followed by the
// process id of the test binary that made it.
const prefix = "herald-test-"

// InMemory points TMPDIR, which t.TempDir and the processes the tests start
// use, at a new folder under /dev/shm when it is a tmpfs with at least
// minFree bytes free and TMPDIR is not set: a TMPDIR of the user's own is
// kept. A TestMain calls it before m.Run and calls the returned remove after.
// It first removes the folders of test binaries that no longer run, which a
// binary killed (or timed out) before its remove leaves in memory.
func InMemory(minFree uint64) (remove func()) {
	if os.Getenv("TMPDIR") != "" || !roomIn(memory, minFree) {
		return func() {}
	}
	removeLeftovers(memory)
	dir, err := os.MkdirTemp(memory, prefix+strconv.Itoa(os.Getpid())+"-")
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

// removeLeftovers removes the folders in dir made by test binaries that no
// longer run.
func removeLeftovers(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := madeBy(e.Name())
		if ok && e.IsDir() && !running(pid) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// madeBy is the process id in the name of a folder InMemory made.
func madeBy(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	id, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(id)
	return pid, err == nil && pid > 0
}
