package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// dataFolder makes a data folder no process uses: a database with a domain
// and a user, a key, a warehouse file and a run's file.
func dataFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := st.EnsureDomain(ctx, "default", now); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: "u1", Domain: "default", Login: "u1@example.com", PasswordHash: "x",
		Created: now, Updated: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "secret.key"), "a key\n")
	write(t, filepath.Join(dir, "warehouse", "p1.duckdb"), strings.Repeat("duck", 1000))
	write(t, filepath.Join(dir, "runs", strings.Repeat("ab", 32)), "a report")
	write(t, filepath.Join(dir, "herald.lock"), "")
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// backupOf writes a backup of the data folder dir as a tar stream.
func backupOf(t testing.TB, dir string) []byte {
	t.Helper()
	entries, m, err := Offline(context.Background(), dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := Write(&b, entries, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBackupRestoresAsATarAndAsAFolder: a backup restores from a tar file and
// from a folder into an empty folder, with every file as it was, and the
// lock file of the folder it was taken of left out.
func TestBackupRestoresAsATarAndAsAFolder(t *testing.T) {
	t.Parallel()
	src := dataFolder(t)
	data := backupOf(t, src)
	if m, err := Check(bytes.NewReader(data)); err != nil || len(m.Files) != 4 {
		t.Fatalf("check: %d files, %v", len(m.Files), err)
	}
	tarFile := filepath.Join(t.TempDir(), "backup.tar")
	write(t, tarFile, string(data))
	folder := filepath.Join(t.TempDir(), "backup")
	if _, err := Extract(bytes.NewReader(data), folder, true); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{tarFile, folder} {
		dst := filepath.Join(t.TempDir(), "data")
		if _, err := Restore(context.Background(), from, dst); err != nil {
			t.Fatalf("restore from %s: %v", from, err)
		}
		for _, name := range []string{"secret.key", "warehouse/p1.duckdb", "runs/" + strings.Repeat("ab", 32)} {
			want, _ := os.ReadFile(filepath.Join(src, name))
			if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("restored %s from %s: %d bytes, %v", name, from, len(got), err)
			}
		}
		if _, err := os.Stat(filepath.Join(dst, "herald.lock")); !os.IsNotExist(err) {
			t.Errorf("the lock file was restored: %v", err)
		}
		st, err := store.Open(context.Background(), filepath.Join(dst, "herald.db"))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := st.CountUsers(context.Background()); err != nil || n != 1 {
			t.Errorf("users in the restored database: %d, %v", n, err)
		}
		st.Close()
	}
}

// TestRestoreRefusesWhatIsNotABackupToRestore: a folder that is not empty,
// a file whose content is not the manifest's, a file the manifest does not
// name, a backup cut short, and a name outside the data folder are refused,
// each naming the file and why, and nothing is left in the target.
func TestRestoreRefusesWhatIsNotABackupToRestore(t *testing.T) {
	t.Parallel()
	src := dataFolder(t)
	data := backupOf(t, src)
	key := []byte("a key\n")
	corrupt := bytes.Replace(data, key, []byte("a kez\n"), 1)
	folder := filepath.Join(t.TempDir(), "backup")
	if _, err := Extract(bytes.NewReader(data), folder, true); err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "tampered")
	if _, err := Extract(bytes.NewReader(data), tampered, true); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tampered, "warehouse", "p1.duckdb"), "not what it was")
	extra := filepath.Join(t.TempDir(), "extra")
	if _, err := Extract(bytes.NewReader(data), extra, true); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(extra, "notes.txt"), "hello")
	for _, c := range []struct {
		name, from, into, want string
	}{
		{"not empty", tarOf(t, data), src, "is not empty (it holds"},
		{"corrupt tar", tarOf(t, corrupt), "", "secret.key: SHA-256"},
		{"cut short", tarOf(t, data[:len(data)/2]), "", "cut short"},
		{"corrupt folder", tampered, "", "warehouse/p1.duckdb: 15 bytes, the manifest says 4000"},
		{"extra file", extra, "", "notes.txt: the manifest does not name it"},
		{"outside", tarOf(t, tarWith(t, "../secret.key", "x")), "", `"../secret.key": not a file a Herald backup holds`},
		{"no manifest", tarOf(t, tarWith(t, "secret.key", "x")), "", "manifest.json: missing"},
	} {
		into := c.into
		if into == "" {
			into = t.TempDir()
		}
		before, _ := os.ReadDir(into)
		_, err := Restore(context.Background(), c.from, into)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
		if after, _ := os.ReadDir(into); len(after) != len(before) {
			t.Errorf("%s: %d entries in the target after a refused restore, %d before", c.name, len(after), len(before))
		}
	}
	if _, err := Restore(context.Background(), folder, filepath.Join(t.TempDir(), "new")); err != nil {
		t.Errorf("the untouched folder backup: %v", err)
	}
}

// tarOf writes data to a file and returns its path.
func tarOf(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "b.tar")
	write(t, p, string(data))
	return p
}

// tarWith is a tar stream of one file.
func tarWith(t *testing.T, name, content string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(content))
	tw.Close()
	return b.Bytes()
}

// FuzzCheck: whatever stream it is given, Check does not panic, and what it
// accepts is a backup whose manifest names exactly its files.
func FuzzCheck(f *testing.F) {
	f.Add(backupOf(f, dataFolderForFuzz(f)))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Check(bytes.NewReader(data))
		if err != nil {
			return
		}
		if m.Format != Format {
			t.Errorf("accepted a manifest of format %q", m.Format)
		}
		for _, file := range m.Files {
			if ValidName(file.Path) != nil {
				t.Errorf("accepted the name %q", file.Path)
			}
		}
	})
}

// dataFolderForFuzz is dataFolder for a fuzz target's seed.
func dataFolderForFuzz(f *testing.F) string {
	dir := f.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		f.Fatal(err)
	}
	st.Close()
	if err := os.WriteFile(filepath.Join(dir, "secret.key"), []byte("k"), 0o600); err != nil {
		f.Fatal(err)
	}
	return dir
}
