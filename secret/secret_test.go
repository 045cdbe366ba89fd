package secret

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	key, err := LoadOrCreateKey(filepath.Join(t.TempDir(), "key"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := b.Seal([]byte("hunter2"), []byte("chan-1"))
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := b.Open(sealed, []byte("chan-1"))
	if err != nil || string(got) != "hunter2" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := b.Open(sealed, []byte("chan-2")); err == nil {
		t.Error("opened with other additional data")
	}
	other, _ := New(bytes.Repeat([]byte{1}, 32))
	if _, err := other.Open(sealed, []byte("chan-1")); err == nil {
		t.Error("opened with another key")
	}
	if _, err := b.Open(sealed[:5], nil); err == nil {
		t.Error("opened a truncated value")
	}
}

func TestLoadOrCreateKeyKeepsKeyAndMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v", fi.Mode(), err)
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load gave another key (%v)", err)
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(path); err == nil {
		t.Error("accepted a malformed key file")
	}
}

// TestKeyRotation: a box given a new key and the old one opens what either
// sealed and seals with the new; a box with only the new key cannot open the old.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	path := filepath.Join(t.TempDir(), "delivery.key")
	file := "# newest first\n" + base64.StdEncoding.EncodeToString(newKey) + "\n\n" + base64.StdEncoding.EncodeToString(oldKey) + "\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := ReadKeys(path)
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], newKey) {
		t.Fatalf("ReadKeys = %d keys, %v", len(keys), err)
	}
	old, _ := New(oldKey)
	both, err := New(keys[0], keys[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	onlyNew, _ := New(newKey)
	sealedOld := old.Seal([]byte("s3cret"), []byte("d1"))
	if p, err := both.Open(sealedOld, []byte("d1")); err != nil || string(p) != "s3cret" {
		t.Fatalf("the rotated box opened the old seal as %q, %v", p, err)
	}
	if _, err := onlyNew.Open(sealedOld, []byte("d1")); err == nil {
		t.Error("a box without the old key opened its seal")
	}
	if p, err := onlyNew.Open(both.Seal([]byte("x"), nil), nil); err != nil || string(p) != "x" {
		t.Errorf("the rotated box does not seal with the newest key: %q, %v", p, err)
	}
	if err := os.WriteFile(path, []byte("# nothing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeys(path); err == nil {
		t.Error("a file without keys was read")
	}
}
