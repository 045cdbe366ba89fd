package backup

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"time"
)

// Format names the layout of a backup in its manifest.
const Format = "herald-backup/1"

// ManifestName is the manifest's name in a backup: the last entry of a tar
// stream, a file beside the others in a folder.
const ManifestName = "manifest.json"

// Bounds of what a backup may hold.
const (
	maxManifestBytes = 16 << 20
	maxFiles         = 1 << 20
)

// Manifest says what a backup holds.
type Manifest struct {
	Format  string    `json:"format"`
	Created time.Time `json:"created"`
	// From names the data folder and how it was taken: of a running process,
	// or of a folder no process used.
	From string `json:"from,omitempty"`
	// DataVersions are the data versions of the projects in the backup's
	// database: its warehouses were copied at these versions.
	DataVersions map[string]int64 `json:"dataVersions,omitempty"`
	Files        []File           `json:"files"`
}

// File is one file of a backup.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Entry is a file to write into a backup: its name in the backup and the
// path it is read from.
type Entry struct {
	Name string
	Path string
}

// names a backup may hold: the database, the keys, the warehouses (and
// their write-ahead logs, in a backup of a folder no process used) and the
// files runs attach.
var names = []*regexp.Regexp{
	regexp.MustCompile(`^herald\.db$`),
	regexp.MustCompile(`^(secret|delivery)\.key$`),
	regexp.MustCompile(`^warehouse/[a-z0-9]{1,64}\.duckdb(\.wal)?$`),
	regexp.MustCompile(`^runs/[0-9a-f]{64}$`),
}

// ValidName reports whether name is the name of a file a backup may hold,
// relative to the data folder, with slashes.
func ValidName(name string) error {
	if path.Clean(name) == name && !strings.HasPrefix(name, "/") {
		for _, re := range names {
			if re.MatchString(name) {
				return nil
			}
		}
	}
	return fmt.Errorf("%q: not a file a Herald backup holds", name)
}

// Write writes a backup of entries to w, a tar stream with m's manifest
// last, filling in each file's size and SHA-256 as it copies it, and returns
// the manifest.
func Write(w io.Writer, entries []Entry, m Manifest) (Manifest, error) {
	m.Format, m.Files = Format, nil
	tw := tar.NewWriter(w)
	for _, e := range entries {
		if err := ValidName(e.Name); err != nil {
			return m, err
		}
		f, err := writeFile(tw, e)
		if err != nil {
			return m, fmt.Errorf("backup: %s: %w", e.Name, err)
		}
		m.Files = append(m.Files, f)
	}
	data, err := manifestJSON(m)
	if err != nil {
		return m, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(data)), ModTime: m.Created,
		Typeflag: tar.TypeReg}); err != nil {
		return m, err
	}
	if _, err := tw.Write(data); err != nil {
		return m, err
	}
	return m, tw.Close()
}

// writeFile writes one file into tw as it is now.
func writeFile(tw *tar.Writer, e Entry) (File, error) {
	src, err := os.Open(e.Path)
	if err != nil {
		return File{}, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return File{}, err
	}
	if !fi.Mode().IsRegular() {
		return File{}, errors.New("not a regular file")
	}
	if err := tw.WriteHeader(&tar.Header{Name: e.Name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime(),
		Typeflag: tar.TypeReg}); err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), src)
	if err != nil {
		return File{}, err
	}
	if n != fi.Size() {
		return File{}, fmt.Errorf("changed while it was copied (%d bytes, then %d)", fi.Size(), n)
	}
	return File{Path: e.Name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// manifestJSON is the manifest as a backup holds it.
func manifestJSON(m Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	return append(data, '\n'), err
}

// encodeManifest writes the manifest to w.
func encodeManifest(w io.Writer, m Manifest) error {
	data, err := manifestJSON(m)
	if err == nil {
		_, err = w.Write(data)
	}
	return err
}

// readManifest decodes a manifest of at most maxManifestBytes and checks it.
func readManifest(r io.Reader) (Manifest, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return Manifest{}, err
	}
	if len(data) > maxManifestBytes {
		return Manifest{}, fmt.Errorf("%s: larger than %d bytes", ManifestName, maxManifestBytes)
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if m.Format != Format {
		return Manifest{}, fmt.Errorf("%s: format %q, want %q", ManifestName, m.Format, Format)
	}
	if len(m.Files) > maxFiles {
		return Manifest{}, fmt.Errorf("%s: %d files, more than %d", ManifestName, len(m.Files), maxFiles)
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		if err := ValidName(f.Path); err != nil {
			return Manifest{}, fmt.Errorf("%s: %w", ManifestName, err)
		}
		if seen[f.Path] {
			return Manifest{}, fmt.Errorf("%s: %s is named twice", ManifestName, f.Path)
		}
		seen[f.Path] = true
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size || f.Size < 0 {
			return Manifest{}, fmt.Errorf("%s: %s: a size of %d and a SHA-256 of %q", ManifestName, f.Path, f.Size, f.SHA256)
		}
	}
	return m, nil
}

// check compares what was read (by name: size and SHA-256) with the manifest.
func check(m Manifest, got map[string]File) error {
	for _, f := range m.Files {
		g, ok := got[f.Path]
		switch {
		case !ok:
			return fmt.Errorf("%s: missing (the manifest names it)", f.Path)
		case g.Size != f.Size:
			return fmt.Errorf("%s: %d bytes, the manifest says %d", f.Path, g.Size, f.Size)
		case g.SHA256 != f.SHA256:
			return fmt.Errorf("%s: SHA-256 %s, the manifest says %s", f.Path, g.SHA256, f.SHA256)
		}
		delete(got, f.Path)
	}
	for name := range got {
		return fmt.Errorf("%s: the manifest does not name it", name)
	}
	return nil
}
