package channels

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest is a short hex digest of s (48 bits of SHA-256): it names a thing
// whose text must not be shown, such as the path of a URL that carries a
// token, or tells two apart.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
