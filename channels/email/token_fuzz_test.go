package email

import (
	"net/mail"
	"regexp"
	"testing"
)

var safeName = regexp.MustCompile(`^[A-Za-z0-9_=-][A-Za-z0-9._=-]*$`)

func FuzzToken(f *testing.F) {
	for _, s := range []string{"sub-1.c1", "", ".", "a..b", "a b", "ž", "../../etc/passwd", "x.", "sha256=abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		tok := token(id)
		if tok != token(id) {
			t.Fatal("token is not deterministic")
		}
		if !safeName.MatchString(tok) || len(tok) > maxPlainToken {
			t.Fatalf("token(%q) = %q is not a safe file name", id, tok)
		}
		if (tok == id) != plainToken(id) {
			t.Fatalf("token(%q) = %q: kept as is %v, plain %v", id, tok, tok == id, plainToken(id))
		}
		if _, err := mail.ParseAddress(tok + "@example.com"); err != nil {
			t.Fatalf("token(%q) = %q is no Message-ID left part: %v", id, tok, err)
		}
	})
}
