package replica

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock"
)

// Object names and headers of the snapshots in the replica's object store.
const (
	warehousePrefix = "warehouse/" // warehouse/<project>/<sha256>
	keysPrefix      = "keys/"      // keys/<file name>/<sha256>
	headerVersion   = "Herald-Data-Version"
	headerTaken     = "Herald-Taken"
	// keepSnapshots is how many snapshots of a project's warehouse are kept:
	// the newest, and the one before for a database restored a sync behind.
	keepSnapshots = 2
)

// Warehouses is what the snapshots copy warehouses from: the analytics service.
type Warehouses interface {
	// Hold keeps the projects' changes waiting until release.
	Hold(ctx context.Context, pids []string) (release func(), err error)
	// CopyWarehouse writes a consistent copy of a held project's warehouse.
	CopyWarehouse(ctx context.Context, pid string, w io.Writer) (int64, error)
}

// Snapshots puts the warehouse of every project, after each change of its
// data version (a load, a model change), and the key files into the
// replica's object store, each named by the SHA-256 of its content, and
// takes them back when a control process restores.
type Snapshots struct {
	obs jetstream.ObjectStore
	tmp string // a folder for the copies on their way
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	taken map[string]int64 // by project: the data version of its newest snapshot
	read  versionReader    // the store's data versions
}

// NewSnapshots returns the snapshots kept in obs; tmp is a folder of the data
// folder's disk for copies on their way, emptied now.
func NewSnapshots(obs jetstream.ObjectStore, tmp string, log *slog.Logger) (*Snapshots, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	return &Snapshots{obs: obs, tmp: tmp, log: log, now: time.Now}, nil
}

// snapshot is one object of the store.
type snapshot struct {
	name    string // the object's name
	digest  string
	version int64 // the project's data version; 0 for a key file
	taken   time.Time
	size    uint64
}

// list returns the snapshots under prefix, grouped by what they are of (a
// project, a key file).
func (s *Snapshots) list(ctx context.Context, prefix string) (map[string][]snapshot, error) {
	infos, err := s.objects(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	out := map[string][]snapshot{}
	for _, info := range infos {
		rest, ok := strings.CutPrefix(info.Name, prefix)
		of, digest, ok2 := strings.Cut(rest, "/")
		if !ok || !ok2 || !validDigest(digest) || info.Deleted {
			continue
		}
		sn := snapshot{name: info.Name, digest: digest, size: info.Size}
		if v := info.Headers.Get(headerVersion); v != "" {
			sn.version, _ = strconv.ParseInt(v, 10, 64)
		}
		sn.taken, _ = time.Parse(time.RFC3339Nano, info.Headers.Get(headerTaken))
		out[of] = append(out[of], sn)
	}
	for _, sns := range out {
		slices.SortFunc(sns, func(a, b snapshot) int {
			return cmp.Or(cmp.Compare(b.version, a.version), b.taken.Compare(a.taken))
		})
	}
	return out, nil
}

// objects lists the store's objects, none when it has none. nats.go waits
// for a listing until its context ends, so each try has listWithin, and one
// that goes unanswered is asked again (askAgain).
func (s *Snapshots) objects(ctx context.Context) ([]*jetstream.ObjectInfo, error) {
	infos, err := askAgain(ctx, s.log, "listing the replica's objects", func(ctx context.Context) ([]*jetstream.ObjectInfo, error) {
		return s.obs.List(ctx)
	})
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	return infos, err
}

// validDigest reports whether s is a SHA-256 in lower-case hex.
func validDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// Load learns which data version each project's newest snapshot has, so that
// Sync takes a snapshot of the projects that changed since.
func (s *Snapshots) Load(ctx context.Context) error {
	all, err := s.list(ctx, warehousePrefix)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taken = make(map[string]int64, len(all))
	for pid, sns := range all {
		s.taken[pid] = sns[0].version
	}
	return nil
}

// Sync takes a snapshot of the warehouse of each project whose data version
// (versions, read from the store) differs from its newest snapshot's, and
// returns how many it took.
func (s *Snapshots) Sync(ctx context.Context, versions map[string]int64, wh Warehouses) (int, error) {
	s.mu.Lock()
	var due []string
	for pid, v := range versions {
		if s.taken == nil || s.taken[pid] != v {
			due = append(due, pid)
		}
	}
	s.mu.Unlock()
	slices.Sort(due)
	n := 0
	for _, pid := range due {
		took, err := s.takeWarehouse(ctx, pid, wh)
		if err != nil {
			return n, err
		}
		if took {
			n++
		}
	}
	return n, nil
}

// takeWarehouse puts a snapshot of the project's warehouse, and reports
// whether it had one.
func (s *Snapshots) takeWarehouse(ctx context.Context, pid string, wh Warehouses) (bool, error) {
	release, err := wh.Hold(ctx, []string{pid})
	if err != nil {
		return false, err
	}
	version, err := s.versionOf(ctx, pid)
	if err != nil {
		release()
		return false, err
	}
	f, digest, size, err := s.copy(func(w io.Writer) (int64, error) { return wh.CopyWarehouse(ctx, pid, w) })
	release()
	if errors.Is(err, os.ErrNotExist) {
		s.note(pid, version) // no data loaded yet
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("snapshot of project %s: %w", pid, err)
	}
	defer os.Remove(f)
	name := warehousePrefix + pid + "/" + digest
	if err := s.put(ctx, name, f, map[string]string{headerVersion: strconv.FormatInt(version, 10)}); err != nil {
		return false, fmt.Errorf("snapshot of project %s: %w", pid, err)
	}
	s.note(pid, version)
	s.log.Info("put a snapshot of a project's warehouse", "project", pid, "dataVersion", version, "bytes", size, "object", name)
	return true, s.prune(ctx, pid)
}

// versionReader reads the store's data versions, by project.
type versionReader func(ctx context.Context) (map[string]int64, error)

// SetVersions tells the snapshots where to read the store's data versions:
// Run does, Sync needs it.
func (s *Snapshots) SetVersions(read func(ctx context.Context) (map[string]int64, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read = read
}

// versionOf is the project's data version as the store has it now.
func (s *Snapshots) versionOf(ctx context.Context, pid string) (int64, error) {
	s.mu.Lock()
	read := s.read
	s.mu.Unlock()
	if read == nil {
		return 0, errors.New("snapshots: no store to read versions from")
	}
	all, err := read(ctx)
	if err != nil {
		return 0, err
	}
	return all[pid], nil
}

func (s *Snapshots) note(pid string, version int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken == nil {
		s.taken = map[string]int64{}
	}
	s.taken[pid] = version
}

// copy writes what write gives into a file of tmp, hashing it, and returns
// the file's path, its SHA-256 and its size.
func (s *Snapshots) copy(write func(io.Writer) (int64, error)) (path, digest string, size int64, err error) {
	f, err := os.CreateTemp(s.tmp, "snapshot-*")
	if err != nil {
		return "", "", 0, err
	}
	h := sha256.New()
	size, err = write(io.MultiWriter(f, h))
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", "", 0, err
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), size, nil
}

// put stores the file at path as the object name with headers, and the time
// it was taken; an object of that name (the same content) only gets the new
// headers.
func (s *Snapshots) put(ctx context.Context, name, path string, headers map[string]string) error {
	meta := jetstream.ObjectMeta{Name: name, Headers: map[string][]string{headerTaken: {s.now().UTC().Format(time.RFC3339Nano)}}}
	for k, v := range headers {
		meta.Headers[k] = []string{v}
	}
	if _, err := s.obs.GetInfo(ctx, name); err == nil {
		return s.obs.UpdateMeta(ctx, name, meta)
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = s.obs.Put(ctx, meta, f)
	return err
}

// prune deletes the project's snapshots but the newest keepSnapshots.
func (s *Snapshots) prune(ctx context.Context, pid string) error {
	all, err := s.list(ctx, warehousePrefix)
	if err != nil {
		return err
	}
	sns := all[pid]
	for _, sn := range sns[min(len(sns), keepSnapshots):] {
		if err := s.obs.Delete(ctx, sn.name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("prune snapshots of project %s: %w", pid, err)
		}
	}
	return nil
}

// PutKeys puts each key file (by the name it has in the data folder, its
// path) that the store lacks. A control process calls it at every start, the
// keys being read only then: a rotated key is in the store before anything
// sealed with it is replicated.
func (s *Snapshots) PutKeys(ctx context.Context, files map[string]string) error {
	for name, path := range files {
		src, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("snapshot of %s: %w", name, err)
		}
		f, digest, _, err := s.copy(func(w io.Writer) (int64, error) { return io.Copy(w, src) })
		src.Close()
		if err != nil {
			return fmt.Errorf("snapshot of %s: %w", name, err)
		}
		err = s.put(ctx, keysPrefix+name+"/"+digest, f, nil)
		os.Remove(f)
		if err != nil {
			return fmt.Errorf("snapshot of %s: %w", name, err)
		}
	}
	return nil
}

// Run reads the store's data versions (read) every interval and takes the
// snapshots Sync finds due, until ctx ends. A failure is logged and tried
// again at the next interval.
func (s *Snapshots) Run(ctx context.Context, every time.Duration, read func(ctx context.Context) (map[string]int64, error),
	wh Warehouses) error {
	s.SetVersions(read)
	t := clock.Real().NewTicker(every) // the replica's store and its retention run on the machine's time
	defer t.Stop()
	for {
		versions, err := read(ctx)
		if err == nil {
			_, err = s.Sync(ctx, versions, wh)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("warehouse snapshots; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// writerObject names the data folder whose process last wrote the replica.
const writerObject = "herald/writer"

// ltxPrefix starts the names of Litestream's files.
const ltxPrefix = "ltx/"

// Writer is the data folder whose control process writes the replica.
type Writer struct {
	Folder string    `json:"folder"`
	Name   string    `json:"name"`
	Since  time.Time `json:"since"`
}

// Writer returns the data folder that last wrote the replica; ok is false
// when none did.
func (s *Snapshots) Writer(ctx context.Context) (w Writer, ok bool, err error) {
	data, err := s.obs.GetBytes(ctx, writerObject)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return Writer{}, false, nil
	}
	if err != nil {
		return Writer{}, false, fmt.Errorf("replica writer: %w", err)
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return Writer{}, false, fmt.Errorf("replica writer %q: %w", data, err)
	}
	return w, true, nil
}

// SetWriter records w as the data folder that writes the replica from now on.
func (s *Snapshots) SetWriter(ctx context.Context, w Writer) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if _, err := s.obs.PutBytes(ctx, writerObject, data); err != nil {
		return fmt.Errorf("replica writer: %w", err)
	}
	return nil
}

// HasDatabase reports whether the replica holds a database: Litestream's files.
func (s *Snapshots) HasDatabase(ctx context.Context) (bool, error) {
	infos, err := s.objects(ctx)
	if err != nil {
		return false, err
	}
	for _, info := range infos {
		if strings.HasPrefix(info.Name, ltxPrefix) && !info.Deleted {
			return true, nil
		}
	}
	return false, nil
}
