package app_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
)

// TestDataFolderIsPrivate starts on a data folder made beforehand with mode 0755, as a
// container image may make it, loads data, executes and exports a report, fires a
// subscription into the outbox, and then finds every file 0600 and every folder 0700.
func TestDataFolderIsPrivate(t *testing.T) {
	gate.Parallel(t)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := newSubWorldWith(t, func(c *app.Config) { c.Data = dir })
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"csv", "pdf"}}}
	})
	wantStatus(t, w.jane.do("POST", w.subsBase, body), 201)
	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "outbox", "*.eml"))
		return len(m) == 1
	})

	var files, dirs int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while walking
		}
		rel, _ := filepath.Rel(dir, path)
		switch mode := info.Mode().Perm(); {
		case d.IsDir():
			dirs++
			if mode != 0o700 {
				t.Errorf("folder %s has mode %v, want 0700", rel, mode)
			}
		case info.Mode().IsRegular():
			files++
			if mode != 0o600 {
				t.Errorf("file %s has mode %v, want 0600", rel, mode)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, want := range []string{"herald.db", "herald.db-wal", "secret.key", "warehouse", "nats", "outbox", "runs"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			seen = append(seen, want)
		}
	}
	if len(seen) > 0 || files < 10 {
		t.Errorf("the walk saw %d files and %d folders; missing %s", files, dirs, strings.Join(seen, ", "))
	}
}
