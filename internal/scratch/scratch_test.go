package scratch

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
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
