package scratch

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestInMemory: TMPDIR unset, the temporary files go to a folder of their
// own on the tmpfs, which remove deletes with what is in it.
func TestInMemory(t *testing.T) {
	t.Setenv("TMPDIR", "")
	if !roomIn(memory, 1) {
		t.Skip("no tmpfs at " + memory)
	}
	remove := InMemory(1)
	dir := os.Getenv("TMPDIR")
	if filepath.Dir(dir) != memory {
		remove()
		t.Fatalf("TMPDIR %q, want a folder in %s", dir, memory)
	}
	f, err := os.CreateTemp("", "file")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if filepath.Dir(f.Name()) != dir {
		t.Errorf("a temporary file at %s, want in %s", f.Name(), dir)
	}
	remove()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after remove: %v, want gone", dir, err)
	}
}

// TestInMemoryKeepsTheUsersChoice: a TMPDIR set is kept, and so is the
// disk when the tmpfs has too little room.
func TestInMemoryKeepsTheUsersChoice(t *testing.T) {
	own := t.TempDir()
	t.Setenv("TMPDIR", own)
	InMemory(1)()
	if got := os.Getenv("TMPDIR"); got != own {
		t.Errorf("TMPDIR %q, want the user's %q", got, own)
	}
	t.Setenv("TMPDIR", "")
	InMemory(math.MaxUint64)()
	if got := os.Getenv("TMPDIR"); got != "" {
		t.Errorf("TMPDIR %q with no tmpfs that large, want it unset", got)
	}
}

// TestLeftoversOfStoppedBinariesAreRemoved: a folder that a test binary no
// longer running made is removed, with what is in it; one of a binary that
// runs, and a folder of another name, are kept.
func TestLeftoversOfStoppedBinariesAreRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stopped := exec.Command("true")
	if err := stopped.Run(); err != nil {
		t.Skipf("no process to stop: %v", err)
	}
	folders := map[string]bool{ // name: kept
		prefix + strconv.Itoa(stopped.Process.Pid) + "-1":   false,
		prefix + strconv.Itoa(os.Getpid()) + "-2":           true,
		"other-" + strconv.Itoa(stopped.Process.Pid) + "-3": true,
		prefix + "x-4": true,
	}
	for name := range folders {
		if err := os.MkdirAll(filepath.Join(dir, name, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeLeftovers(dir)
	for name, kept := range folders {
		_, err := os.Stat(filepath.Join(dir, name))
		if got := err == nil; got != kept {
			t.Errorf("%s: kept %v, want %v", name, got, kept)
		}
	}
}
