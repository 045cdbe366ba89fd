package backup

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Check reads a backup's tar stream to its end and checks every file against
// the manifest, writing nothing. The error names the file and what is wrong.
func Check(r io.Reader) (Manifest, error) {
	return read(r, func(string) (io.WriteCloser, error) { return nopWriter{}, nil })
}

// Extract writes a backup's tar stream into dir, which must be missing or
// empty, checking every file against the manifest; with keepManifest it
// writes the manifest there too (a backup folder), without it the files
// only (a data folder). On any failure it removes what it wrote, and the
// error names the file and what is wrong.
func Extract(r io.Reader, dir string, keepManifest bool) (m Manifest, err error) {
	undo, err := claimEmpty(dir)
	if err != nil {
		return Manifest{}, err
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	m, err = read(r, createIn(dir))
	if err != nil {
		return m, err
	}
	if keepManifest {
		err = writeManifest(dir, m)
	}
	return m, err
}

// read reads a tar stream of a backup, handing each file's content to the
// writer open returns for its name, and checks them against the manifest,
// which must be the last entry.
func read(r io.Reader, open func(name string) (io.WriteCloser, error)) (Manifest, error) {
	tr := tar.NewReader(r)
	got := map[string]File{}
	var m *Manifest
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("the backup is cut short or not a tar stream: %w", err)
		}
		if m != nil {
			return Manifest{}, fmt.Errorf("%s: an entry after the manifest", hdr.Name)
		}
		if hdr.Name == ManifestName {
			mf, err := readManifest(tr)
			if err != nil {
				return Manifest{}, err
			}
			m = &mf
			continue
		}
		if err := ValidName(hdr.Name); err != nil {
			return Manifest{}, err
		}
		if hdr.Typeflag != tar.TypeReg {
			return Manifest{}, fmt.Errorf("%s: not a regular file", hdr.Name)
		}
		if _, dup := got[hdr.Name]; dup || len(got) >= maxFiles {
			return Manifest{}, fmt.Errorf("%s: named twice, or past %d files", hdr.Name, maxFiles)
		}
		f, err := copyOut(tr, hdr.Name, open)
		if err != nil {
			return Manifest{}, err
		}
		got[hdr.Name] = f
	}
	if m == nil {
		return Manifest{}, fmt.Errorf("%s: missing (not a Herald backup, or cut short)", ManifestName)
	}
	return *m, check(*m, got)
}

// copyOut copies one file's content to the writer open returns, hashing it.
func copyOut(r io.Reader, name string, open func(string) (io.WriteCloser, error)) (File, error) {
	w, err := open(name)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("the backup is cut short: %w", err)
	}
	if err = errors.Join(err, w.Close()); err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	return File{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// claimEmpty makes sure dir is a missing or empty folder, creating it, and
// returns what removes everything written into it (and dir, if it made it).
func claimEmpty(dir string) (undo func(), err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		return func() { os.RemoveAll(dir) }, nil
	case err != nil:
		return nil, err
	case len(entries) > 0:
		return nil, fmt.Errorf("%s is not empty (it holds %s): a backup goes into an empty folder only", dir, entries[0].Name())
	}
	return func() { emptyFolder(dir) }, nil
}

// emptyFolder removes everything in dir, and leaves dir.
func emptyFolder(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// create creates the file name (a valid name, with slashes) under dir,
// which must not exist yet, and its folder.
func create(dir, name string) (*os.File, error) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// createIn returns what creates each file of a backup under dir (see
// create), synced to disk when it is closed.
func createIn(dir string) func(name string) (io.WriteCloser, error) {
	return func(name string) (io.WriteCloser, error) {
		f, err := create(dir, name)
		return syncCloser{f}, err
	}
}

// writeManifest writes m into dir as ManifestName.
func writeManifest(dir string, m Manifest) error {
	f, err := create(dir, ManifestName)
	if err != nil {
		return err
	}
	return errors.Join(encodeManifest(f, m), f.Sync(), f.Close())
}

// syncCloser syncs its file before it closes it: a restored file is on disk
// once the restore says so.
type syncCloser struct{ *os.File }

func (f syncCloser) Close() error { return errors.Join(f.Sync(), f.File.Close()) }

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) Close() error                { return nil }
