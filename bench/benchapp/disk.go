package benchapp

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// Files are the regular files under a data folder at one moment, by path.
type Files map[string]bool

// ListFiles lists the regular files under dir.
func ListFiles(dir string) Files {
	out := Files{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out[path] = true
		}
		return nil
	})
	return out
}

// Added counts the files under dir that were not there when f was listed, by
// the folder under dir they are in ("." for dir itself). NATS's own storage
// is left out: ObjectStoreBytes measures what went there.
func (f Files) Added(dir string) map[string]int {
	out := map[string]int{}
	for path := range ListFiles(dir) {
		if f[path] {
			continue
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			continue
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if top == rel {
			top = "."
		}
		if top != "nats" {
			out[top]++
		}
	}
	return out
}

// ObjectStoreBytes is how many bytes the embedded NATS server under the data
// folder dir keeps for the object store of delivery files (its stream's
// files), 0 when it keeps none.
func ObjectStoreBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(filepath.Join(dir, "nats"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.Contains(path, "OBJ_HERALD_FILES") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}
