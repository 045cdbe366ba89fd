package httpguard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMethodLabelIsFromAFixedSet(t *testing.T) {
	t.Parallel()
	for m, want := range map[string]string{
		"GET": "GET", "PATCH": "PATCH", "OPTIONS": "OPTIONS", "get": "other", "PROPFIND": "other",
		strings.Repeat("X", 8<<10): "other", "": "other",
	} {
		if got := MethodLabel(m); got != want {
			t.Errorf("MethodLabel(%.20q) = %q, want %q", m, got, want)
		}
	}
}

func TestClipKeepsAtMost256BytesOfWholeCharacters(t *testing.T) {
	t.Parallel()
	short := strings.Repeat("a", MaxLogBytes)
	if Clip(short) != short {
		t.Errorf("a string of %d bytes was cut", MaxLogBytes)
	}
	for _, s := range []string{strings.Repeat("a", 8<<10), strings.Repeat("ř", 200), "a" + strings.Repeat("€", 100)} {
		got := Clip(s)
		body := strings.TrimSuffix(got, "…")
		if len(body) > MaxLogBytes || body == got || !utf8.ValidString(got) || !strings.HasPrefix(s, body) {
			t.Errorf("Clip of %d bytes gave %d bytes %.30q", len(s), len(got), got)
		}
	}
}
