package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Box seals secrets with one AES-256-GCM key and opens them with that key or
// any older one it was given, so that a key can be replaced without a moment
// when sealed values cannot be opened.
type Box struct {
	aead  cipher.AEAD   // seals, and opens first
	older []cipher.AEAD // open what earlier keys sealed
}

// New returns a Box that seals with key, a 32-byte key, and opens with key or
// any of older.
func New(key []byte, older ...[]byte) (*Box, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	b := &Box{aead: aead}
	for _, k := range older {
		a, err := newAEAD(k)
		if err != nil {
			return nil, err
		}
		b.older = append(b.older, a)
	}
	return b, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// ReadKeys reads a key file of one key per line, each 32 bytes in base64, the
// newest first; blank lines and lines starting with # are skipped. New(keys[0],
// keys[1:]...) seals with the newest and opens with all of them.
func ReadKeys(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	var keys [][]byte
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParseKey(line)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no key in the file", path)
	}
	return keys, nil
}

// ParseKey decodes a key given as base64 (standard or URL alphabet) of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, errors.New("secret key must be 32 bytes in base64")
}

// LoadOrCreateKey reads the key file at path, creating it with a new random
// key (mode 0600) when it does not exist.
func LoadOrCreateKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		k, err := ParseKey(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create secret key: %w", err)
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	return key, nil
}

// Derive returns a 32-byte key for purpose (such as "links") from key, so one
// configured secret gives independent keys for independent uses.
func Derive(key []byte, purpose string) []byte {
	out, err := hkdf.Key(sha256.New, key, nil, "herald "+purpose, 32)
	if err != nil {
		panic(err) // only for a length HKDF-SHA256 cannot give
	}
	return out
}

// Seal encrypts plaintext; additional binds the result to its context (e.g. a
// channel id), so a sealed value cannot be moved to another record.
func (b *Box) Seal(plaintext, additional []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, plaintext, additional)
}

// Open decrypts what Seal produced with the same additional data.
func (b *Box) Open(sealed, additional []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("open secret: too short")
	}
	for _, a := range append([]cipher.AEAD{b.aead}, b.older...) {
		if p, err := a.Open(nil, sealed[:n], sealed[n:], additional); err == nil {
			return p, nil
		}
	}
	return nil, errors.New("open secret: wrong key or corrupted value")
}

// OpenFor opens the secret sealed for the record id (its additional data), as
// a string: nothing sealed is "". A nil Box opens only that.
func (b *Box) OpenFor(sealed []byte, id string) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	if b == nil {
		return "", errors.New("no key to open its secret")
	}
	p, err := b.Open(sealed, []byte(id))
	return string(p), err
}
