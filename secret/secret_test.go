package secret

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
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
