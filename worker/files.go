package worker

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/singleflight"

	"github.com/heraldhq/herald/internal/clock"
)

// Defaults for FilesConfig.
const (
	// DefaultFilesBucket is the name of the object store of delivery files.
	DefaultFilesBucket = "HERALD_FILES"
	// DefaultFilesTTL is how long an object is kept after it was put.
	DefaultFilesTTL = 2 * DefaultMaxAge // Config.Keep of the default configuration
	// DefaultMaxFileBytes is the largest file Put accepts: 64 MiB.
	DefaultMaxFileBytes = 64 << 20
)

// Errors of Files.
var (
	// ErrFileTooLarge: the file is larger than FilesConfig.MaxBytes.
	ErrFileTooLarge = errors.New("delivery file too large")
	// ErrNoObject: the bucket does not hold the object (it expired or was
	// never put).
	ErrNoObject = errors.New("delivery file not in the object store")
	// ErrCorruptObject: the object's name is not a SHA-256 digest, or its
	// content does not match its name or size.
	ErrCorruptObject = errors.New("corrupt delivery file object")
)

const (
	// filesConfirmEvery is how long Put trusts what it learned about an
	// object before it asks the bucket again.
	filesConfirmEvery = time.Minute
	// filesCacheSize bounds each of the caches Put keeps; a full cache is
	// emptied.
	filesCacheSize = 4096
	// fetchTempPrefix starts the name of a file Fetch is still writing. A
	// final copy is named by 64 hex digits, so the two never meet.
	fetchTempPrefix = ".fetch-"
)

// Object names a file kept in the delivery object store by its content.
type Object struct {
	Name string `json:"name"` // the object's name in the bucket: the SHA-256 of its content in lower-case hex
	Size int64  `json:"size"` // bytes
}

// FilesConfig configures the object store of delivery files.
type FilesConfig struct {
	// Bucket is the object store's name. Default DefaultFilesBucket.
	Bucket string
	// Replicas is how many copies of each object the cluster keeps. Default 1.
	Replicas int
	// TTL is how long an object is kept after it was put. Default
	// DefaultFilesTTL (14 days, Config.Keep of the default configuration).
	TTL time.Duration
	// MaxBytes is the largest file Put accepts. Default DefaultMaxFileBytes
	// (64 MiB).
	MaxBytes int64
	// Scratch is the folder for the local copies Fetch makes. Only Fetch and
	// Prune need it.
	Scratch string
	// Local is a folder of files this process keeps named by the SHA-256 of
	// their content in lower-case hex (the engine's run files): Put takes
	// their names for their digests, and Fetch hands out such a file where
	// it is, with no copy in Scratch. Default none.
	Local string
	// Private says that no other process fetches what Put stores (the
	// embedded NATS server accepts no other process): Put leaves a file of
	// Local where it is, and keeps any other in Local, instead of putting it
	// into the object store. Needs Local.
	Private bool
	// Clock is the clock for refreshing objects and pruning copies. Default:
	// the real clock.
	Clock clock.Clock
	// Logger is told when the bucket waits for JetStream. Default: discard.
	Logger *slog.Logger
}

// Files keeps delivery attachments in a JetStream object store: Put stores a
// file once per distinct content, and Fetch makes a verified local copy of it
// on another machine. A Files is safe for concurrent use.
type Files struct {
	obs jetstream.ObjectStore
	// nc, msgGet and metas are where a description the bucket's Get did not
	// find is looked up again (see get).
	nc            *nats.Conn
	msgGet, metas string
	ttl           time.Duration
	maxBytes      int64
	scratch       string
	local         string // "" without Local
	private       bool
	clock         clock.Clock
	flights       singleflight.Group

	mu      sync.Mutex            // guards paths and objects
	paths   map[string]hashedFile // by path as given to Put
	objects map[string]storedAt   // by object name

	// scratchMu orders the changes to Scratch: a copy is not pruned while
	// it is being reused or renamed into place.
	scratchMu sync.Mutex
	writing   map[string]bool // temporary files of fetches in progress

	// counters for tests
	hashes    atomic.Int64 // files hashed by Put
	lookups   atomic.Int64 // GetInfo calls by Put
	puts      atomic.Int64 // objects stored by Put
	downloads atomic.Int64 // downloads Fetch started
}

// hashedFile is what Put learned of a file: its content's Object, valid as
// long as the file keeps its size and modification time.
type hashedFile struct {
	size    int64
	modTime time.Time
	obj     Object
}

// storedAt is what Put learned of an object in the bucket.
type storedAt struct {
	put       time.Time // when it was put, as far as Put knows
	confirmed time.Time // when the bucket last said it holds it
}

// OpenFiles creates the bucket of cfg, or updates its settings when it
// exists, and returns its Files.
func OpenFiles(ctx context.Context, js jetstream.JetStream, cfg FilesConfig) (*Files, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultFilesBucket
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultFilesTTL
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxFileBytes
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.Replicas < 1 || cfg.Replicas > 5:
		return nil, fmt.Errorf("files: replicas %d, want 1 to 5", cfg.Replicas)
	case cfg.TTL < 0:
		return nil, fmt.Errorf("files: negative TTL %v", cfg.TTL)
	case cfg.MaxBytes < 0:
		return nil, fmt.Errorf("files: negative MaxBytes %d", cfg.MaxBytes)
	case cfg.Private && cfg.Local == "":
		return nil, errors.New("files: Private needs a Local folder")
	}
	var obs jetstream.ObjectStore
	err := untilAvailable(ctx, cfg.Logger, "files bucket", func(ctx context.Context) (err error) {
		obs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      cfg.Bucket,
			Description: "Herald delivery files, named by the SHA-256 of their content",
			TTL:         cfg.TTL,
			Replicas:    cfg.Replicas,
			Storage:     jetstream.FileStorage,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("files: object store %s: %w", cfg.Bucket, err)
	}
	return &Files{
		obs:      obs,
		nc:       js.Conn(),
		msgGet:   msgGetSubject(js, "OBJ_"+cfg.Bucket),
		metas:    "$O." + cfg.Bucket + ".M.",
		ttl:      cfg.TTL,
		maxBytes: cfg.MaxBytes,
		scratch:  cfg.Scratch,
		local:    localDir(cfg.Local),
		private:  cfg.Private,
		clock:    cfg.Clock,
		paths:    make(map[string]hashedFile),
		objects:  make(map[string]storedAt),
		writing:  make(map[string]bool),
	}, nil
}

// Put stores the file at path under its content's SHA-256, unless the bucket
// holds it already, and returns its Object. The file is streamed, never read
// whole into memory. An object put more than TTL/2 ago is put again so that
// it outlives the deliveries that now reference it. A file over MaxBytes
// gives an error wrapping ErrFileTooLarge.
//
// A file of Local is named by its digest already and is not read to learn
// it; with Private, it stays where it is, the one copy, and any other file
// is kept in Local rather than in the bucket.
//
// Put remembers the digests of files it hashed, keyed by path, size and
// modification time, and asks the bucket about an object at most once a
// minute, so a file referenced by many deliveries costs little after the
// first.
func (f *Files) Put(ctx context.Context, path string) (Object, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Object{}, fmt.Errorf("delivery file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Object{}, fmt.Errorf("delivery file %s: not a regular file", path)
	}
	if fi.Size() > f.maxBytes {
		return Object{}, fmt.Errorf("delivery file %s: %d bytes, more than %d: %w", path, fi.Size(), f.maxBytes, ErrFileTooLarge)
	}
	o, local := f.inLocal(path, fi)
	if !local {
		var ok bool
		if o, ok = f.hashed(path, fi); !ok {
			if o, err = f.hash(path); err != nil {
				return Object{}, err
			}
		}
	}
	switch {
	case f.private && local:
		return o, nil
	case f.private:
		return o, f.keep(ctx, path, o)
	}
	if f.fresh(o.Name) {
		return o, nil
	}
	err = f.shared(ctx, "put\x00"+o.Name, func(ctx context.Context) error { return f.store(ctx, path, o) })
	if err != nil {
		return Object{}, err
	}
	return o, nil
}

// localDir cleans a Local folder, which "" leaves out.
func localDir(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Clean(dir)
}

// inLocal returns the Object of the file at path, whose information is fi,
// when it is a file of Local: named by its digest.
func (f *Files) inLocal(path string, fi fs.FileInfo) (Object, bool) {
	name := filepath.Base(path)
	if f.local == "" || filepath.Dir(filepath.Clean(path)) != f.local || !validObjectName(name) {
		return Object{}, false
	}
	return Object{Name: name, Size: fi.Size()}, true
}

// localFile returns the path of the file of Local that holds o, if there is one
// of o's size.
func (f *Files) localFile(o Object) (string, bool) {
	if f.local == "" {
		return "", false
	}
	path := filepath.Join(f.local, o.Name)
	fi, err := os.Stat(path)
	return path, err == nil && fi.Mode().IsRegular() && fi.Size() == o.Size
}

// keep copies the file at path, whose content is o, into Local under o's
// name, unless Local has it already.
func (f *Files) keep(ctx context.Context, path string, o Object) error {
	if _, ok := f.localFile(o); ok {
		return nil
	}
	return f.shared(ctx, "keep\x00"+o.Name, func(context.Context) error {
		if _, ok := f.localFile(o); ok {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("delivery file: %w", err)
		}
		defer src.Close()
		if err := os.MkdirAll(f.local, 0o700); err != nil {
			return fmt.Errorf("delivery file: %w", err)
		}
		tmp, err := os.CreateTemp(f.local, ".part-*")
		if err != nil {
			return fmt.Errorf("delivery file: %w", err)
		}
		defer os.Remove(tmp.Name()) // after the rename, a no-op
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(src, f.maxBytes+1))
		if err == nil {
			err = tmp.Sync()
		}
		if err = errors.Join(err, tmp.Close()); err != nil {
			return fmt.Errorf("delivery file %s: %w", path, err)
		}
		if n != o.Size || hex.EncodeToString(h.Sum(nil)) != o.Name {
			f.forget(path)
			return fmt.Errorf("delivery file %s: changed while it was kept", path)
		}
		if err := os.Rename(tmp.Name(), filepath.Join(f.local, o.Name)); err != nil {
			return fmt.Errorf("delivery file: %w", err)
		}
		return nil
	})
}

// hashed returns the Object of the file at path if Put hashed it before and
// it has the same size and modification time now.
func (f *Files) hashed(path string, fi fs.FileInfo) (Object, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.paths[path]
	if !ok || h.size != fi.Size() || !h.modTime.Equal(fi.ModTime()) {
		return Object{}, false
	}
	return h.obj, true
}

// hash streams the file at path through SHA-256 and remembers its Object.
func (f *Files) hash(path string) (Object, error) {
	file, err := os.Open(path)
	if err != nil {
		return Object{}, fmt.Errorf("delivery file: %w", err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return Object{}, fmt.Errorf("delivery file: %w", err)
	}
	f.hashes.Add(1)
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(file, f.maxBytes+1))
	if err != nil {
		return Object{}, fmt.Errorf("delivery file %s: %w", path, err)
	}
	if n > f.maxBytes {
		return Object{}, fmt.Errorf("delivery file %s: more than %d bytes: %w", path, f.maxBytes, ErrFileTooLarge)
	}
	o := Object{Name: hex.EncodeToString(h.Sum(nil)), Size: n}
	if n == fi.Size() { // else it changed while it was read: hash it again next time
		f.mu.Lock()
		if len(f.paths) >= filesCacheSize {
			clear(f.paths)
		}
		f.paths[path] = hashedFile{size: fi.Size(), modTime: fi.ModTime(), obj: o}
		f.mu.Unlock()
	}
	return o, nil
}

// fresh reports whether the bucket said less than a minute ago that it holds
// the object named name, put less than TTL/2 ago.
func (f *Files) fresh(name string) bool {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.objects[name]
	return ok && now.Sub(s.confirmed) < filesConfirmEvery && now.Sub(s.put) < f.ttl/2
}

// stored remembers that the bucket holds the object named name, put at put.
func (f *Files) stored(name string, put, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.objects[name]; !ok && len(f.objects) >= filesCacheSize {
		clear(f.objects)
	}
	f.objects[name] = storedAt{put: put, confirmed: now}
}

// store puts the file at path, whose content hashed to o, into the bucket
// unless the bucket holds o already and put it less than TTL/2 ago.
func (f *Files) store(ctx context.Context, path string, o Object) error {
	now := f.clock.Now()
	f.lookups.Add(1)
	info, err := f.obs.GetInfo(ctx, o.Name)
	switch {
	case err == nil && info.Size == uint64(o.Size) && now.Sub(info.ModTime) < f.ttl/2:
		f.stored(o.Name, info.ModTime, now)
		return nil
	case err != nil && !errors.Is(err, jetstream.ErrObjectNotFound):
		return fmt.Errorf("delivery file %s: object %s: %w", path, o.Name, err)
	}

	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("delivery file: %w", err)
	}
	defer file.Close()
	f.puts.Add(1)
	// nats.go v1.55.0's ObjectStore.Put publishes on a JetStream context
	// of its own and tears its reply subscription down on return; if that
	// happens before the context's reconnect watcher first runs, the
	// watcher parks on a nil channel for good. It costs one idle
	// goroutine per lost race, and Put runs once per distinct file per
	// TTL/2, so it stays small; the tests' leak check names it.
	info, err = f.obs.Put(ctx, jetstream.ObjectMeta{Name: o.Name}, io.LimitReader(file, f.maxBytes+1))
	if err != nil {
		return fmt.Errorf("delivery file %s: put object %s: %w", path, o.Name, err)
	}
	sum, _ := hex.DecodeString(o.Name)
	if info.Size != uint64(o.Size) || info.Digest != "SHA-256="+base64.URLEncoding.EncodeToString(sum) {
		// The file changed between hashing and putting: the object under
		// this name must not keep other content.
		_ = f.obs.Delete(context.WithoutCancel(ctx), o.Name)
		f.forget(path)
		return fmt.Errorf("delivery file %s: changed while it was stored", path)
	}
	f.stored(o.Name, now, now)
	return nil
}

// forget drops what Put learned of the file at path.
func (f *Files) forget(path string) {
	f.mu.Lock()
	delete(f.paths, path)
	f.mu.Unlock()
}

// Fetch returns the path of a local copy of o: the file of Local that holds
// it, where it is, when this process has one; else a copy under Scratch,
// downloaded and verified (size and SHA-256) first unless a verified copy is
// there. Concurrent fetches of one object download it once. A missing object
// gives an error wrapping ErrNoObject; a name that is not 64 lower-case hex
// digits, or content that does not match its name or size, gives an error
// wrapping ErrCorruptObject.
func (f *Files) Fetch(ctx context.Context, o Object) (string, error) {
	if !validObjectName(o.Name) {
		return "", fmt.Errorf("delivery file object %q: name is not a SHA-256 digest: %w", o.Name, ErrCorruptObject)
	}
	if o.Size < 0 {
		return "", fmt.Errorf("delivery file object %s: size %d: %w", o.Name, o.Size, ErrCorruptObject)
	}
	if path, ok := f.localFile(o); ok {
		return path, nil
	}
	if f.scratch == "" {
		return "", errors.New("delivery files: no scratch folder")
	}
	final := filepath.Join(f.scratch, o.Name)
	if ok, err := f.reuse(final, o); ok || err != nil {
		return final, err
	}
	err := f.shared(ctx, "fetch\x00"+o.Name+"\x00"+strconv.FormatInt(o.Size, 10), func(ctx context.Context) error {
		if ok, err := f.reuse(final, o); ok || err != nil {
			return err
		}
		return f.download(ctx, o, final)
	})
	if err != nil {
		return "", err
	}
	return final, nil
}

// validObjectName reports whether name is a SHA-256 digest in lower-case hex,
// and so safe as a file name.
func validObjectName(name string) bool {
	return len(name) == 2*sha256.Size && strings.Trim(name, "0123456789abcdef") == ""
}

// reuse reports whether the verified copy final of o is there already, and
// if so marks it as fetched now so that Prune keeps it.
func (f *Files) reuse(final string, o Object) (bool, error) {
	f.scratchMu.Lock()
	defer f.scratchMu.Unlock()
	fi, err := os.Stat(final)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delivery file copy: %w", err)
	}
	if fi.Size() != o.Size { // the copy was verified against its name: the size asked for is wrong
		return false, fmt.Errorf("delivery file object %s: size %d, the content has %d: %w", o.Name, o.Size, fi.Size(), ErrCorruptObject)
	}
	now := f.clock.Now()
	if err := os.Chtimes(final, now, now); err != nil {
		return false, fmt.Errorf("delivery file copy: %w", err)
	}
	return true, nil
}

// get opens the object name. The bucket's Get reads the object's
// description from any replica (see readLast), and a follower that has not
// applied the put yet finds none, as the worker that takes the message
// naming the file right after the control process put it may ask: a
// description the Get did not find is looked up on the stream's leader.
// Only what the leader has not, or has as deleted, is ErrNoObject, which
// fails the delivery for good; an object the leader has is asked for again,
// the wait doubling from 25 ms, for 1.6 s in all, then the fetch fails for
// now and its delivery is tried again later.
func (f *Files) get(ctx context.Context, name string) (jetstream.ObjectResult, error) {
	for pause := 25 * time.Millisecond; ; pause *= 2 {
		res, err := f.obs.Get(ctx, name)
		if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return res, err
		}
		has, err := f.leaderHas(ctx, name)
		switch {
		case err != nil:
			return nil, err
		case !has:
			return nil, ErrNoObject
		case pause > time.Second:
			return nil, errors.New("the bucket's leader has it, the replica asked has not caught up")
		}
		if !clock.Sleep(ctx, f.clock, pause) {
			return nil, ctx.Err()
		}
	}
}

// leaderHas reports whether the stream's leader has a description of the
// object name that is not deleted.
func (f *Files) leaderHas(ctx context.Context, name string) (bool, error) {
	m, err := readLast(ctx, f.nc, f.msgGet, f.metas+base64.URLEncoding.EncodeToString([]byte(name)))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	var meta struct {
		Deleted bool `json:"deleted"`
	}
	if err := json.Unmarshal(m.data, &meta); err != nil {
		return false, fmt.Errorf("the description of %s: %w", name, err)
	}
	return !meta.Deleted, nil
}

// download copies o from the bucket to a temporary file in Scratch, checks
// its size and digest while it writes, and renames it to final.
func (f *Files) download(ctx context.Context, o Object, final string) error {
	if err := os.MkdirAll(f.scratch, 0o700); err != nil {
		return fmt.Errorf("delivery files scratch folder: %w", err)
	}
	tmp, err := os.CreateTemp(f.scratch, fetchTempPrefix+"*")
	if err != nil {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	tmpName := filepath.Base(tmp.Name())
	f.scratchMu.Lock()
	f.writing[tmpName] = true
	f.scratchMu.Unlock()
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		f.scratchMu.Lock()
		delete(f.writing, tmpName)
		f.scratchMu.Unlock()
	}()

	f.downloads.Add(1)
	res, err := f.get(ctx, o.Name)
	if err != nil {
		return fmt.Errorf("delivery file object %s: %w", o.Name, err)
	}
	defer res.Close()
	if info, err := res.Info(); err == nil && info.Size != uint64(o.Size) {
		return fmt.Errorf("delivery file object %s: %d bytes, want %d: %w", o.Name, info.Size, o.Size, ErrCorruptObject)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(res, o.Size+1))
	if errors.Is(err, jetstream.ErrDigestMismatch) {
		return fmt.Errorf("delivery file object %s: %w: %w", o.Name, ErrCorruptObject, err)
	}
	if err != nil {
		return fmt.Errorf("delivery file object %s: %w", o.Name, err)
	}
	if n != o.Size {
		return fmt.Errorf("delivery file object %s: %d bytes or more, want %d: %w", o.Name, n, o.Size, ErrCorruptObject)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != o.Name {
		return fmt.Errorf("delivery file object %s: content has SHA-256 %s: %w", o.Name, got, ErrCorruptObject)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	now := f.clock.Now()
	if err := os.Chtimes(tmp.Name(), now, now); err != nil {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	f.scratchMu.Lock()
	err = os.Rename(tmp.Name(), final)
	f.scratchMu.Unlock()
	if err != nil {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	done = true
	return nil
}

// shared runs fn once for all concurrent callers with the same key. It runs
// without the first caller's cancellation, so that a caller giving up does
// not fail the others, but within its deadline; each caller waits only as
// long as its own context allows.
func (f *Files) shared(ctx context.Context, key string, fn func(context.Context) error) error {
	ch := f.flights.DoChan(key, func() (any, error) {
		fctx := context.WithoutCancel(ctx)
		if deadline, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			fctx, cancel = context.WithDeadline(fctx, deadline)
			defer cancel()
		}
		return nil, fn(fctx)
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Prune removes the local copies not fetched for longer than age, and files
// left behind by fetches that ended without finishing. It keeps the
// temporary files of fetches in progress in this process, and any file
// younger than age.
func (f *Files) Prune(age time.Duration) error {
	if f.scratch == "" {
		return errors.New("delivery files: no scratch folder")
	}
	entries, err := os.ReadDir(f.scratch)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delivery files scratch folder: %w", err)
	}
	cutoff := f.clock.Now().Add(-age)
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !(validObjectName(name) || strings.HasPrefix(name, fetchTempPrefix)) {
			continue // not ours
		}
		if err := f.pruneOne(name, cutoff); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pruneOne removes the file name in Scratch if it was last modified before
// cutoff and no fetch of this process is writing it.
func (f *Files) pruneOne(name string, cutoff time.Time) error {
	f.scratchMu.Lock()
	defer f.scratchMu.Unlock()
	if f.writing[name] {
		return nil
	}
	path := filepath.Join(f.scratch, name)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	if !fi.ModTime().Before(cutoff) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delivery file copy: %w", err)
	}
	return nil
}
