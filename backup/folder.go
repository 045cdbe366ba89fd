package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Plain lists the files of a backup that are copied as they are, in the data
// folder dir: the key files and the files runs attach. A key file configured
// elsewhere (delivery.keyFile, secrets.key) is not in the data folder, and
// not in the backup.
func Plain(dir string) ([]Entry, error) {
	var out []Entry
	for _, name := range []string{"secret.key", "delivery.key"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			out = append(out, Entry{Name: name, Path: filepath.Join(dir, name)})
		}
	}
	runs, err := os.ReadDir(filepath.Join(dir, "runs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range runs {
		name := "runs/" + e.Name()
		if e.Type().IsRegular() && ValidName(name) == nil {
			out = append(out, Entry{Name: name, Path: filepath.Join(dir, "runs", e.Name())})
		}
	}
	return out, nil
}

// Offline lists the files of a backup of the data folder dir while no
// process uses it (the caller holds its lock): the database copied by
// SQLite's backup into tmp, the warehouses with their write-ahead logs as
// they are, and Plain's files. It returns them with the manifest to write.
func Offline(ctx context.Context, dir, tmp string) ([]Entry, Manifest, error) {
	db := filepath.Join(dir, "herald.db")
	if _, err := os.Stat(db); err != nil {
		return nil, Manifest{}, fmt.Errorf("%s has no herald.db: not the data folder of a control process (%w)", dir, err)
	}
	copyPath := filepath.Join(tmp, "herald.db")
	if err := CopySQLite(ctx, db, copyPath); err != nil {
		return nil, Manifest{}, err
	}
	m := Manifest{Created: time.Now().UTC(), From: dir + " (no process running)"}
	var err error
	if m.DataVersions, err = DataVersions(ctx, copyPath); err != nil {
		return nil, Manifest{}, err
	}
	entries := []Entry{{Name: "herald.db", Path: copyPath}}
	whs, err := os.ReadDir(filepath.Join(dir, "warehouse"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, Manifest{}, err
	}
	for _, e := range whs {
		name := "warehouse/" + e.Name()
		if e.Type().IsRegular() && ValidName(name) == nil {
			entries = append(entries, Entry{Name: name, Path: filepath.Join(dir, "warehouse", e.Name())})
		}
	}
	plain, err := Plain(dir)
	if err != nil {
		return nil, Manifest{}, err
	}
	return append(entries, plain...), m, nil
}

// Restore restores the backup at from, a backup folder or tar file, into
// dataDir, which must be missing or empty. Every file is checked against the
// manifest, and the database with PRAGMA integrity_check; on any failure
// nothing is left in dataDir, and the error names the file and what is
// wrong.
func Restore(ctx context.Context, from, dataDir string) (Manifest, error) {
	fi, err := os.Stat(from)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if fi.IsDir() {
		m, err = restoreFolder(from, dataDir)
	} else {
		var f *os.File
		if f, err = os.Open(from); err != nil {
			return Manifest{}, err
		}
		m, err = Extract(f, dataDir, false)
		f.Close()
	}
	if err != nil {
		return m, err
	}
	if !slices.ContainsFunc(m.Files, func(f File) bool { return f.Path == "herald.db" }) {
		err = errors.New("herald.db: missing: the backup holds no database")
	} else if err = integrity(ctx, filepath.Join(dataDir, "herald.db")); err != nil {
		err = fmt.Errorf("herald.db: %w", err)
	}
	if err != nil {
		emptyFolder(dataDir)
	}
	return m, err
}

// restoreFolder copies a backup folder into dataDir, checking each file
// against the folder's manifest.
func restoreFolder(from, dataDir string) (m Manifest, err error) {
	mf, err := os.Open(filepath.Join(from, ManifestName))
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w (not a Herald backup folder)", ManifestName, err)
	}
	m, err = readManifest(mf)
	mf.Close()
	if err != nil {
		return Manifest{}, err
	}
	if err := extraFiles(from, m); err != nil {
		return m, err
	}
	undo, err := claimEmpty(dataDir)
	if err != nil {
		return m, err
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	got := map[string]File{}
	for _, f := range m.Files {
		src, err := os.Open(filepath.Join(from, filepath.FromSlash(f.Path)))
		if err != nil {
			return m, fmt.Errorf("%s: %w", f.Path, err)
		}
		g, err := copyOut(src, f.Path, createIn(dataDir))
		src.Close()
		if err != nil {
			return m, err
		}
		got[f.Path] = g
	}
	return m, check(m, got)
}

// extraFiles refuses a backup folder that holds a file its manifest does not name.
func extraFiles(dir string, m Manifest) error {
	named := map[string]bool{ManifestName: true}
	for _, f := range m.Files {
		named[f.Path] = true
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !named[rel] {
			return fmt.Errorf("%s: the manifest does not name it", rel)
		}
		return nil
	})
}
