package replica

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// RestoredWarehouse is the warehouse snapshot a project was restored from.
type RestoredWarehouse struct {
	Project string
	// Version is the snapshot's data version; Want the restored store's.
	Version, Want int64
	Taken         time.Time
	Bytes         uint64
}

// RestoredKey is a key file restored into the data folder.
type RestoredKey struct {
	Name  string
	Taken time.Time
}

// RestoreWarehouses writes, for each project of the restored store
// (versions, its data versions), the snapshot of its warehouse that matches
// best to path(project): the one of the same data version, else the newest
// older one, else the oldest newer one (loads that reached the warehouse's
// snapshot but not the store's replica). A project without a snapshot had no
// data and is left out.
func (s *Snapshots) RestoreWarehouses(ctx context.Context, versions map[string]int64,
	path func(pid string) string) ([]RestoredWarehouse, error) {
	all, err := s.list(ctx, warehousePrefix)
	if err != nil {
		return nil, err
	}
	var out []RestoredWarehouse
	for pid, want := range versions {
		sn, ok := best(all[pid], want)
		if !ok {
			continue
		}
		if err := s.fetch(ctx, sn, path(pid)); err != nil {
			return out, fmt.Errorf("restore the warehouse of project %s: %w", pid, err)
		}
		out = append(out, RestoredWarehouse{Project: pid, Version: sn.version, Want: want, Taken: sn.taken, Bytes: sn.size})
	}
	return out, nil
}

// best picks from sns, newest first, the snapshot for data version want.
func best(sns []snapshot, want int64) (snapshot, bool) {
	var newer snapshot
	for _, sn := range sns {
		if sn.version <= want {
			return sn, true
		}
		newer = sn
	}
	return newer, newer.name != ""
}

// RestoreKeys writes the newest snapshot of each key file named in files
// (its name in the store, the path to write) that does not exist yet.
func (s *Snapshots) RestoreKeys(ctx context.Context, files map[string]string) ([]RestoredKey, error) {
	all, err := s.list(ctx, keysPrefix)
	if err != nil {
		return nil, err
	}
	var out []RestoredKey
	for name, path := range files {
		sns := all[name]
		if len(sns) == 0 {
			continue
		}
		if _, err := os.Stat(path); err == nil {
			continue
		}
		newest := sns[0] // list sorts a key file's snapshots newest first
		if err := s.fetch(ctx, newest, path); err != nil {
			return out, fmt.Errorf("restore %s: %w", name, err)
		}
		out = append(out, RestoredKey{Name: name, Taken: newest.taken})
	}
	return out, nil
}

// fetch writes the snapshot's object to path, checking its content against
// its name, through a temporary file renamed into place.
func (s *Snapshots) fetch(ctx context.Context, sn snapshot, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	r, err := s.obs.Get(ctx, sn.name)
	if err != nil {
		return err
	}
	defer r.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".restore-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), r)
	if err == nil {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sn.digest {
		return fmt.Errorf("object %s holds content of SHA-256 %s", sn.name, got)
	}
	return os.Rename(tmp.Name(), path)
}
