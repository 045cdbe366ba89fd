package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/backup"
	"github.com/heraldhq/herald/internal/startstop"
)

// backupSocket is where a control process takes `herald backup`'s requests:
// a Unix socket in its data folder, which only the folder's owner reaches,
// as only the owner reads the folder itself.
func backupSocket(dir string) string { return filepath.Join(dir, "herald.sock") }

// maxSocketPath is the longest path a Unix socket may have on every system
// Herald runs on.
const maxSocketPath = 100

// listenBackups binds the backup socket of a control process. A data folder
// whose path is too long for a socket gets none: `herald backup` then says
// so.
func (a *App) listenBackups() error {
	path := backupSocket(a.cfg.Data)
	if len(path) > maxSocketPath {
		a.log.Warn("the data folder's path is too long for herald backup's socket: back up a running process by its replica, or stop it first",
			"socket", path)
		return nil
	}
	// This process holds the folder's lock: a socket there is a dead process's.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("backup socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("backup socket: %w", err)
	}
	a.sock = ln
	a.closers = append(a.closers, func() error {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
	return nil
}

// backupsUnit serves GET /backup on the backup socket, if there is one.
func (a *App) backupsUnit() startstop.Unit {
	return startstop.Unit{Name: "backup socket", Run: func(ctx context.Context) error {
		if a.sock == nil {
			return nil
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /backup", a.serveBackup)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
			ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
		if err := serving(ctx, srv, a.sock, srv.Close); err != nil {
			a.log.Warn("backup socket", "err", err)
		}
		return nil
	}}
}

// serveBackup answers a backup of this process's data folder, as a tar
// stream whose last entry is the manifest: a stream cut short by an error
// has none, and the client refuses it.
func (a *App) serveBackup(w http.ResponseWriter, r *http.Request) {
	tmp, err := os.MkdirTemp(a.cfg.Data, "backup-")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(tmp)
	began := time.Now()
	entries, m, err := a.backupEntries(r.Context(), tmp)
	if err != nil {
		a.log.Error("backup", "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	m, err = backup.Write(w, entries, m)
	if err != nil {
		a.log.Error("backup cut short", "err", err)
		return
	}
	a.log.Info("took a backup", "files", len(m.Files), "took", time.Since(began).Round(time.Millisecond))
}

// backupEntries copies what a backup of the running process holds into
// tmp, in step: while every project's changes wait, the database (SQLite's
// online backup, writers going on) and each warehouse (checkpointed); then
// the key files and run files, which are written once and never change.
func (a *App) backupEntries(ctx context.Context, tmp string) ([]backup.Entry, backup.Manifest, error) {
	versions, err := a.store.DataVersions(ctx)
	if err != nil {
		return nil, backup.Manifest{}, err
	}
	pids := warehouseProjects(filepath.Join(a.cfg.Data, "warehouse"))
	for pid := range versions {
		pids = append(pids, pid)
	}
	release, err := a.md.Hold(ctx, pids)
	if err != nil {
		return nil, backup.Manifest{}, err
	}
	defer release()
	m := backup.Manifest{Created: time.Now().UTC(), From: a.cfg.Data + " (a running process)"}
	db := filepath.Join(tmp, "herald.db")
	if err := backup.CopySQLite(ctx, filepath.Join(a.cfg.Data, "herald.db"), db); err != nil {
		return nil, m, err
	}
	if m.DataVersions, err = backup.DataVersions(ctx, db); err != nil {
		return nil, m, err
	}
	entries := []backup.Entry{{Name: "herald.db", Path: db}}
	slices.Sort(pids)
	for _, pid := range slices.Compact(pids) {
		e, err := a.copyWarehouse(ctx, tmp, pid)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, m, err
		}
		entries = append(entries, e)
	}
	plain, err := backup.Plain(a.cfg.Data)
	return append(entries, plain...), m, err
}

// copyWarehouse copies a held project's warehouse into tmp.
func (a *App) copyWarehouse(ctx context.Context, tmp, pid string) (backup.Entry, error) {
	name := "warehouse/" + pid + ".duckdb"
	if backup.ValidName(name) != nil {
		return backup.Entry{}, fs.ErrNotExist
	}
	path := filepath.Join(tmp, pid+".duckdb")
	f, err := os.Create(path)
	if err != nil {
		return backup.Entry{}, err
	}
	_, err = a.md.CopyWarehouse(ctx, pid, f)
	if err = errors.Join(err, f.Close()); err != nil {
		return backup.Entry{}, err
	}
	return backup.Entry{Name: name, Path: path}, nil
}

// warehouseProjects lists the projects with a warehouse file in dir.
func warehouseProjects(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if pid, ok := strings.CutSuffix(e.Name(), ".duckdb"); ok && e.Type().IsRegular() {
			out = append(out, pid)
		}
	}
	return out
}

// Backup takes a backup of the data folder of cfg to to: a tar file when to
// ends in .tar (or is "-", standard output), else a new folder. A running
// process takes it over its socket; a folder no process uses is read here,
// under its lock. It checks what it wrote against the manifest, removes it
// when that fails, and says on out what it took.
func Backup(ctx context.Context, cfg Config, to string, stdout, out io.Writer) error {
	if to == "" {
		return errors.New("backup: name where it goes (--to FILE.tar, --to FOLDER, or --to - for standard output)")
	}
	stream, from, closeStream, err := openBackup(ctx, cfg.Data)
	if err != nil {
		return err
	}
	defer closeStream()
	began := time.Now()
	var m backup.Manifest
	switch {
	case to == "-":
		m, err = backup.Check(io.TeeReader(stream, stdout))
	case strings.HasSuffix(to, ".tar"):
		m, err = writeTar(stream, to)
	default:
		m, err = backup.Extract(stream, to, true)
	}
	if err != nil {
		return fmt.Errorf("backup of %s: %w", from, err)
	}
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	fmt.Fprintf(out, "Backup of %s: %d files, %d bytes, the warehouses of %d projects, in %v; restore it with herald restore --from %s --data <an empty folder>\n",
		from, len(m.Files), size, len(m.DataVersions), time.Since(began).Round(time.Millisecond), to)
	return nil
}

// openBackup returns the backup stream of the data folder dir: from the
// running process's socket, or, when the folder's lock is free, written here.
func openBackup(ctx context.Context, dir string) (io.Reader, string, func(), error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, "", nil, fmt.Errorf("backup: %s is no data folder: %v", dir, err)
	}
	release, err := lockFolder(dir)
	if err != nil {
		return backupFromProcess(ctx, dir)
	}
	tmp, err := os.MkdirTemp(dir, "backup-")
	if err != nil {
		release()
		return nil, "", nil, err
	}
	done := func() {
		os.RemoveAll(tmp)
		release()
	}
	entries, m, err := backup.Offline(ctx, dir, tmp)
	if err != nil {
		done()
		return nil, "", nil, err
	}
	pr, pw := io.Pipe()
	written := make(chan struct{})
	go func() {
		defer close(written)
		_, err := backup.Write(pw, entries, m)
		pw.CloseWithError(err)
	}()
	// Closing the reader ends the writer; its files go once it has.
	return pr, dir + " (no process running)", func() { pr.Close(); <-written; done() }, nil
}

// backupFromProcess asks the process running on dir for a backup.
func backupFromProcess(ctx context.Context, dir string) (io.Reader, string, func(), error) {
	sock := backupSocket(dir)
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://herald/backup", nil)
	if err != nil {
		return nil, "", nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", nil, fmt.Errorf("backup: a process uses %s and its socket does not answer: %w", dir, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, "", nil, fmt.Errorf("backup: the running process answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return resp.Body, dir + " (a running process)", func() { resp.Body.Close() }, nil
}

// writeTar writes the stream into the tar file path, checking it on the
// way; a backup that fails the check is removed.
func writeTar(stream io.Reader, path string) (backup.Manifest, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return backup.Manifest{}, err
	}
	m, err := backup.Check(io.TeeReader(stream, f))
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(path)
	}
	return m, err
}

// Restore restores the backup at from (a folder or a tar file) into the
// data folder dataDir, which must be missing or empty, and says on out what
// it restored.
func Restore(ctx context.Context, from, dataDir string, out io.Writer) error {
	if from == "" {
		return errors.New("restore: name the backup (--from FILE.tar or --from FOLDER)")
	}
	m, err := backup.Restore(ctx, from, dataDir)
	if err != nil {
		return fmt.Errorf("restore of %s: %w", from, err)
	}
	fmt.Fprintf(out, "Restored %d files of the backup taken %s of %s into %s; start Herald on it: herald serve --data %s\n",
		len(m.Files), m.Created.Format(time.RFC3339), m.From, dataDir, dataDir)
	return nil
}
