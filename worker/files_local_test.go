package worker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// localFile writes data into the Local folder of e under its digest, as the
// engine keeps a run's file, and returns its path.
func (e *filesEnv) localFile(t *testing.T, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(e.files.local, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.files.local, digest(data))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// objects lists the names of the bucket's objects.
func (e *filesEnv) objects(t *testing.T) []string {
	t.Helper()
	list, err := e.obs.List(awaitCtx(t))
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range list {
		names = append(names, o.Name)
	}
	return names
}

// TestFilesPrivateKeepsOneCopy: in a process no other one fetches from, a
// run's file stays the one copy: Put neither reads it nor puts it into the
// bucket, and Fetch hands out the file itself. A file from elsewhere (a big
// HTML part) is kept in the Local folder, not in the bucket.
func TestFilesPrivateKeepsOneCopy(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{Local: filepath.Join(t.TempDir(), "runs"), Private: true})
	ctx := awaitCtx(t)
	data := report(7)
	path := e.localFile(t, data)
	o, err := e.files.Put(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Object{Name: digest(data), Size: int64(len(data))}); o != want {
		t.Fatalf("object %+v, want %+v", o, want)
	}
	got, err := e.files.Fetch(ctx, o)
	if err != nil || got != path {
		t.Fatalf("fetch gave %s (%v), want the run's file %s", got, err, path)
	}

	part := report(8)
	po, err := e.files.Put(ctx, e.writeFile(t, "part.html", part))
	if err != nil {
		t.Fatal(err)
	}
	got, err = e.files.Fetch(ctx, po)
	if err != nil || got != filepath.Join(e.files.local, digest(part)) {
		t.Fatalf("fetch of a file from elsewhere gave %s (%v), want it kept in the Local folder", got, err)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != string(part) {
		t.Fatalf("kept copy: %d bytes, %v", len(b), err)
	}

	if objs := e.objects(t); len(objs) != 0 {
		t.Errorf("the bucket holds %v, want nothing", objs)
	}
	if s := e.scratchFiles(t); len(s) != 0 {
		t.Errorf("the scratch folder holds %v, want nothing", s)
	}
	if h, d := e.files.hashes.Load(), e.files.downloads.Load(); h != 1 || d != 0 {
		t.Errorf("hashed %d files and downloaded %d, want 1 (the part) and 0", h, d)
	}
}

// TestFilesLocalReadInPlaceAndShared: where workers of other processes
// fetch, a run's file goes into the bucket once, under its name, without
// being hashed again; a worker of this process reads it in place, and one
// elsewhere downloads it.
func TestFilesLocalReadInPlaceAndShared(t *testing.T) {
	t.Parallel()
	e := newFilesEnv(t, FilesConfig{Local: filepath.Join(t.TempDir(), "runs")})
	ctx := awaitCtx(t)
	data := report(9)
	path := e.localFile(t, data)
	o, err := e.files.Put(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if objs := e.objects(t); len(objs) != 1 || objs[0] != o.Name {
		t.Fatalf("the bucket holds %v, want %s", objs, o.Name)
	}
	if got, err := e.files.Fetch(ctx, o); err != nil || got != path {
		t.Fatalf("fetch in this process gave %s (%v), want the run's file %s", got, err, path)
	}
	if h, s := e.files.hashes.Load(), e.scratchFiles(t); h != 0 || len(s) != 0 {
		t.Errorf("hashed %d files, scratch holds %v; want none and nothing", h, s)
	}

	// A worker elsewhere: the same bucket, no Local folder.
	elsewhere := &Files{obs: e.obs, ttl: e.files.ttl, maxBytes: e.files.maxBytes, scratch: filepath.Join(t.TempDir(), "scratch"),
		clock: e.files.clock, paths: map[string]hashedFile{}, objects: map[string]storedAt{}, writing: map[string]bool{}}
	got, err := elsewhere.Fetch(ctx, o)
	if err != nil || filepath.Dir(got) != elsewhere.scratch {
		t.Fatalf("fetch elsewhere gave %s (%v), want a copy in its scratch folder", got, err)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != string(data) {
		t.Fatalf("copy elsewhere: %d bytes, %v", len(b), err)
	}
}
