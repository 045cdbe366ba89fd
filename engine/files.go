package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// partPrefix starts the name of a file the store is still writing; a
// finished file is named by 64 hex digits, so the two never meet.
const partPrefix = ".part-"

// fileStore keeps the files runs attach in one folder, each named by the
// SHA-256 of its content in lower-case hex: a file is written once, streamed
// as it is rendered, and the delivery relay and a worker in the same process
// read it where it is, by its name. Its modification time says, on the
// engine's clock, when a run last wrote it: the same content exported again
// keeps the file and refreshes that time.
type fileStore struct {
	dir string
	now func() time.Time
}

// write streams what fill writes into the store and returns the file's path.
// When fill fails, nothing is kept.
func (s fileStore) write(fill func(io.Writer) error) (string, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return "", fmt.Errorf("attachment folder: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, partPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("attachment: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(tmp, h), 64<<10)
	if err := fill(w); err != nil {
		tmp.Close()
		return "", err
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync() // a name promises its content, after a crash too
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return "", fmt.Errorf("write attachment: %w", err)
	}
	path := filepath.Join(s.dir, hex.EncodeToString(h.Sum(nil)))
	if _, err := os.Stat(path); err != nil {
		if err := os.Rename(tmp.Name(), path); err != nil {
			return "", fmt.Errorf("write attachment: %w", err)
		}
	}
	// On the engine's clock, which pruning reads it by.
	now := s.now()
	if err := os.Chtimes(path, now, now); err != nil {
		return "", fmt.Errorf("write attachment: %w", err)
	}
	return path, nil
}

// isDigest reports whether name is a SHA-256 digest in lower-case hex: the
// name of a file of the store.
func isDigest(name string) bool {
	return len(name) == 2*sha256.Size && strings.Trim(name, "0123456789abcdef") == ""
}

// pruneFiles removes the files runs attached that no run used since limit,
// except those of deliveries still pending, and the folders of files
// attached at instants before limit, except those of instants with a
// delivery still pending (how data folders of earlier versions kept them).
// A folder whose name tells no instant goes when it was last changed before
// limit, and a file left half written by a crash after an hour.
func (e *Engine) pruneFiles(ctx context.Context, limit time.Time) error {
	entries, err := os.ReadDir(e.cfg.FilesDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pendingAt, err := e.st.PendingInstants(ctx, limit)
	if err != nil {
		return err
	}
	pending, err := e.st.PendingFiles(ctx, limit)
	if err != nil {
		return err
	}
	var errs []error
	for _, de := range entries {
		path := filepath.Join(e.cfg.FilesDir, de.Name())
		fi, err := de.Info()
		if err != nil {
			continue
		}
		switch {
		case de.Type().IsRegular() && isDigest(de.Name()):
			if fi.ModTime().Before(limit) && !pending[path] {
				errs = append(errs, os.Remove(path))
			}
		case de.Type().IsRegular() && strings.HasPrefix(de.Name(), partPrefix):
			if fi.ModTime().Before(e.now().Add(-time.Hour)) {
				errs = append(errs, os.Remove(path))
			}
		case de.IsDir():
			if at, ok := folderInstant(de.Name()); ok {
				if !at.Before(limit) || pendingAt[at.Unix()] {
					continue
				}
			} else if !fi.ModTime().Before(limit) {
				continue
			}
			errs = append(errs, os.RemoveAll(path))
		}
	}
	return errors.Join(errs...)
}
