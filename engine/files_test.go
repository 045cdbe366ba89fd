package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileStoreWritesEachContentOnce: a file is named by its content's
// SHA-256, the same content written again is the same file with its time
// refreshed, and a write that fails leaves nothing behind.
func TestFileStoreWritesEachContentOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	s := fileStore{dir: filepath.Join(t.TempDir(), "runs"), now: func() time.Time { return now }}
	write := func(content string) string {
		t.Helper()
		path, err := s.write(func(w io.Writer) error { _, err := io.WriteString(w, content); return err })
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	first := write("%PDF report")
	sum := sha256.Sum256([]byte("%PDF report"))
	if filepath.Base(first) != hex.EncodeToString(sum[:]) {
		t.Errorf("file %s, want it named by its SHA-256", first)
	}
	now = now.Add(time.Hour)
	if again := write("%PDF report"); again != first {
		t.Errorf("the same content went to %s and %s", first, again)
	}
	if fi, err := os.Stat(first); err != nil || !fi.ModTime().Equal(now) {
		t.Errorf("written again, the file's time is %v (%v), want %v", fi.ModTime(), err, now)
	}
	if _, err := s.write(func(w io.Writer) error {
		_, _ = io.WriteString(w, "half a report")
		return errors.New("render failed")
	}); err == nil {
		t.Error("a failed render gave no error")
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("files in the store: %v, %v; want the one report", entries, err)
	}
}
