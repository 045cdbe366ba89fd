package worker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock"
)

// testClock is a clock that moves only when told to. It starts at the real
// time, since the server stamps objects with its own clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// filesEnv is a Files on an embedded server, with the bucket behind it.
type filesEnv struct {
	files *Files
	obs   jetstream.ObjectStore
	clock *testClock
	dir   string // where writeFile puts files
}

func newFilesEnv(t *testing.T, cfg FilesConfig) *filesEnv {
	t.Helper()
	n := startNATS(t, t.TempDir())
	ctx := awaitCtx(t)
	tc := newTestClock()
	if cfg.Scratch == "" {
		cfg.Scratch = filepath.Join(t.TempDir(), "scratch")
	}
	cfg.Clock = clock.NowFrom(tc.Now)
	f, err := OpenFiles(ctx, n.JetStream(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	bucket := cfg.Bucket
	if bucket == "" {
		bucket = DefaultFilesBucket
	}
	obs, err := n.JetStream().ObjectStore(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	return &filesEnv{files: f, obs: obs, clock: tc, dir: t.TempDir()}
}

// writeFile writes data to a new file called name and returns its path.
func (e *filesEnv) writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// put stores data as a file called name and returns its Object.
func (e *filesEnv) put(t *testing.T, name string, data []byte) Object {
	t.Helper()
	o, err := e.files.Put(awaitCtx(t), e.writeFile(t, name, data))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// info is the bucket's record of the object named name.
func (e *filesEnv) info(t *testing.T, name string) *jetstream.ObjectInfo {
	t.Helper()
	info, err := e.obs.GetInfo(awaitCtx(t), name)
	if err != nil {
		t.Fatalf("object %s: %v", name, err)
	}
	return info
}

// scratchFiles lists the names of the files in the scratch folder.
func (e *filesEnv) scratchFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(e.files.scratch)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// report is some content larger than one object chunk (128 KiB).
func report(seed byte) []byte {
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = seed + byte(i*7) + byte(i>>9)
	}
	return data
}

func TestFilesPutSameContentOnce(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	data := report(1)
	a := e.put(t, "run1/revenue.pdf", data)
	b := e.put(t, "run2/revenue-copy.pdf", data)
	if a != b {
		t.Fatalf("same content, objects %+v and %+v", a, b)
	}
	if want := (Object{Name: digest(data), Size: int64(len(data))}); a != want {
		t.Fatalf("object %+v, want %+v", a, want)
	}
	list, err := e.obs.List(awaitCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != a.Name || list[0].Size != uint64(a.Size) {
		t.Fatalf("bucket holds %d objects, want just %s", len(list), a.Name)
	}
	if got := e.files.puts.Load(); got != 1 {
		t.Errorf("%d objects stored, want 1", got)
	}
}

func TestFilesPutUnchangedFileHashedOnce(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	path := e.writeFile(t, "chart.png", report(2))
	first, err := e.files.Put(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for range 999 {
		o, err := e.files.Put(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if o != first {
			t.Fatalf("object %+v, then %+v", first, o)
		}
	}
	if h, l := e.files.hashes.Load(), e.files.lookups.Load(); h != 1 || l != 1 {
		t.Fatalf("1000 puts of one file: hashed %d times, bucket asked %d times; want 1 and 1", h, l)
	}

	// After a minute the bucket is asked again, once.
	e.clock.Advance(filesConfirmEvery)
	for range 10 {
		if _, err := e.files.Put(ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	if h, l := e.files.hashes.Load(), e.files.lookups.Load(); h != 1 || l != 2 {
		t.Fatalf("a minute later: hashed %d times, bucket asked %d times; want 1 and 2", h, l)
	}

	// A changed file is hashed again and gives another object.
	changed := report(3)
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	o, err := e.files.Put(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != digest(changed) || e.files.hashes.Load() != 2 {
		t.Fatalf("changed file: object %s after %d hashes, want %s after 2", o.Name, e.files.hashes.Load(), digest(changed))
	}
}

func TestFilesFetchCopiesAndKeepsCopy(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	data := report(4)
	o := e.put(t, "sales.xlsx", data)

	path, err := e.files.Fetch(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(e.files.scratch, o.Name) {
		t.Errorf("copy at %s, want under the scratch folder named %s", path, o.Name)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("copy has %d bytes unlike the %d put", len(got), len(data))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("copy mode %v, want 0600", perm)
	}
	di, err := os.Stat(e.files.scratch)
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("scratch folder mode %v, want 0700", perm)
	}

	// The second fetch uses the copy: it works with the object gone.
	if err := e.obs.Delete(ctx, o.Name); err != nil {
		t.Fatal(err)
	}
	again, err := e.files.Fetch(ctx, o)
	if err != nil {
		t.Fatalf("second fetch, object deleted: %v", err)
	}
	if again != path {
		t.Errorf("second fetch at %s, first at %s", again, path)
	}
	if n := e.files.downloads.Load(); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

func TestFilesEmptyFile(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	o := e.put(t, "empty.csv", nil)
	if want := (Object{Name: digest(nil), Size: 0}); o != want {
		t.Fatalf("object %+v, want %+v", o, want)
	}
	path, err := e.files.Fetch(awaitCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("copy of an empty file: %v, %v", fi, err)
	}
}

func TestFilesFetchConcurrentDownloadsOnce(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	data := report(5)
	o := e.put(t, "big.pdf", data)

	const fetchers = 8
	var wg sync.WaitGroup
	paths := make([]string, fetchers)
	errs := make([]error, fetchers)
	start := make(chan struct{})
	for i := range fetchers {
		wg.Go(func() {
			<-start
			paths[i], errs[i] = e.files.Fetch(ctx, o)
		})
	}
	close(start)
	wg.Wait()
	for i := range fetchers {
		if errs[i] != nil {
			t.Fatalf("fetch %d: %v", i, errs[i])
		}
		if paths[i] != paths[0] {
			t.Fatalf("fetch %d at %s, fetch 0 at %s", i, paths[i], paths[0])
		}
	}
	if got, err := os.ReadFile(paths[0]); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copy differs from what was put (%v)", err)
	}
	if n := e.files.downloads.Load(); n != 1 {
		t.Errorf("%d concurrent fetches downloaded %d times, want once", fetchers, n)
	}
	if names := e.scratchFiles(t); len(names) != 1 || names[0] != o.Name {
		t.Errorf("scratch folder holds %v, want only %s", names, o.Name)
	}
}

func TestFilesFetchCorruptObject(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	want := report(6)
	other := report(7) // as long as want: only the digest tells them apart
	name := digest(want)
	if _, err := e.obs.PutBytes(ctx, name, other); err != nil {
		t.Fatal(err)
	}
	_, err := e.files.Fetch(ctx, Object{Name: name, Size: int64(len(want))})
	if !errors.Is(err, ErrCorruptObject) {
		t.Fatalf("content unlike its name: error %v, want ErrCorruptObject", err)
	}
	if names := e.scratchFiles(t); len(names) != 0 {
		t.Fatalf("scratch folder holds %v after a corrupt object", names)
	}
}

func TestFilesFetchWrongSize(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	o := e.put(t, "a.pdf", report(8))
	for _, size := range []int64{o.Size - 1, o.Size + 1, -1} {
		_, err := e.files.Fetch(ctx, Object{Name: o.Name, Size: size})
		if !errors.Is(err, ErrCorruptObject) {
			t.Errorf("size %d for an object of %d bytes: error %v, want ErrCorruptObject", size, o.Size, err)
		}
	}
	if names := e.scratchFiles(t); len(names) != 0 {
		t.Fatalf("scratch folder holds %v after wrong sizes", names)
	}
}

func TestFilesFetchBadName(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	good := digest([]byte("x"))
	for _, name := range []string{
		"",
		"../../etc/passwd",
		"../" + good[3:],
		good[:63],
		good + "0",
		strings.ToUpper(good),
		good[:62] + "/x",
		good[:63] + "g",
	} {
		_, err := e.files.Fetch(ctx, Object{Name: name, Size: 1})
		if !errors.Is(err, ErrCorruptObject) {
			t.Errorf("name %q: error %v, want ErrCorruptObject", name, err)
		}
	}
	if n := e.files.downloads.Load(); n != 0 {
		t.Errorf("%d downloads for bad names", n)
	}
	if names := e.scratchFiles(t); len(names) != 0 {
		t.Errorf("scratch folder holds %v", names)
	}
}

func TestFilesFetchMissingObject(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	data := []byte("never put")
	_, err := e.files.Fetch(awaitCtx(t), Object{Name: digest(data), Size: int64(len(data))})
	if !errors.Is(err, ErrNoObject) {
		t.Fatalf("missing object: error %v, want ErrNoObject", err)
	}
	if names := e.scratchFiles(t); len(names) != 0 {
		t.Fatalf("scratch folder holds %v after a missing object", names)
	}
}

func TestFilesPutTooLarge(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{MaxBytes: 1024})
	ctx := awaitCtx(t)
	if _, err := e.files.Put(ctx, e.writeFile(t, "fits.png", bytes.Repeat([]byte{1}, 1024))); err != nil {
		t.Fatalf("file of MaxBytes: %v", err)
	}
	_, err := e.files.Put(ctx, e.writeFile(t, "big.png", bytes.Repeat([]byte{2}, 1025)))
	if !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("file over MaxBytes: error %v, want ErrFileTooLarge", err)
	}
	if list, err := e.obs.List(ctx); err != nil || len(list) != 1 {
		t.Fatalf("bucket holds %d objects (%v), want only the one that fits", len(list), err)
	}
}

func TestFilesPutRefreshesObjectAfterHalfTTL(t *testing.T) {
	t.Parallel()
	const ttl = time.Hour
	e := newFilesEnv(t, FilesConfig{TTL: ttl})
	ctx := awaitCtx(t)
	path := e.writeFile(t, "weekly.pdf", report(9))
	o, err := e.files.Put(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	first := e.info(t, o.Name)

	e.clock.Advance(ttl/2 - time.Minute)
	if _, err := e.files.Put(ctx, path); err != nil {
		t.Fatal(err)
	}
	if info := e.info(t, o.Name); info.NUID != first.NUID || !info.ModTime.Equal(first.ModTime) {
		t.Fatalf("put again before TTL/2: NUID %s, was %s", info.NUID, first.NUID)
	}
	if l := e.files.lookups.Load(); l != 2 {
		t.Errorf("bucket asked %d times, want 2 (the confirmation had gone stale)", l)
	}

	e.clock.Advance(2 * time.Minute)
	if _, err := e.files.Put(ctx, path); err != nil {
		t.Fatal(err)
	}
	second := e.info(t, o.Name)
	if second.NUID == first.NUID || !second.ModTime.After(first.ModTime) {
		t.Fatalf("not put again after TTL/2: NUID %s, mod time %v; was %s, %v", second.NUID, second.ModTime, first.NUID, first.ModTime)
	}
	if n := e.files.puts.Load(); n != 2 {
		t.Errorf("%d objects stored, want 2", n)
	}
	// The refreshed object still fetches.
	if _, err := e.files.Fetch(ctx, o); err != nil {
		t.Fatal(err)
	}
}

func TestFilesPrune(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	old := e.put(t, "old.pdf", report(10))
	fresh := e.put(t, "fresh.pdf", report(11))
	oldPath, err := e.files.Fetch(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour)
	freshPath, err := e.files.Fetch(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	// Temporary files: of a fetch that died halfway long ago, of one that
	// wrote a moment ago, and of one of this process that is slow.
	stale := filepath.Join(e.files.scratch, fetchTempPrefix+"stale")
	writing := filepath.Join(e.files.scratch, fetchTempPrefix+"writing")
	slow := filepath.Join(e.files.scratch, fetchTempPrefix+"slow")
	long, now := e.clock.Now().Add(-3*time.Hour), e.clock.Now()
	for p, mtime := range map[string]time.Time{stale: long, writing: now, slow: long} {
		if err := os.WriteFile(p, []byte("part"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	e.files.scratchMu.Lock()
	e.files.writing[filepath.Base(slow)] = true
	e.files.scratchMu.Unlock()
	// Not ours: left alone whatever its age.
	foreign := filepath.Join(e.files.scratch, "notes.txt")
	if err := os.WriteFile(foreign, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(foreign, long, long); err != nil {
		t.Fatal(err)
	}

	if err := e.files.Prune(time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{oldPath, stale} {
		if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s kept (%v), want it pruned", filepath.Base(gone), err)
		}
	}
	for _, kept := range []string{freshPath, writing, slow, foreign} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s pruned: %v", filepath.Base(kept), err)
		}
	}

	// A pruned copy is downloaded again; a kept one is not.
	if _, err := e.files.Fetch(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := e.files.Fetch(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if n := e.files.downloads.Load(); n != 3 {
		t.Errorf("%d downloads, want 3", n)
	}
}

func TestFilesFetchKeepsReusedCopyFromPrune(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{})
	ctx := awaitCtx(t)
	o := e.put(t, "daily.pdf", report(12))
	path, err := e.files.Fetch(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	// Fetched again each half hour: never unused for an hour.
	for range 4 {
		e.clock.Advance(30 * time.Minute)
		if _, err := e.files.Fetch(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := e.files.Prune(time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("copy fetched every half hour pruned: %v", err)
	}
	if n := e.files.downloads.Load(); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}
