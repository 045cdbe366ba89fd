package httpguard

import (
	"net/http"
	"unicode/utf8"
)

// knownMethods are the methods net/http names; a request with any other is
// refused before any work, and counted as OtherMethod.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodConnect: true, http.MethodOptions: true,
	http.MethodTrace: true,
}

// OtherMethod is the label value of every method the service does not know.
const OtherMethod = "other"

// KnownMethod reports whether m is one of the methods net/http names.
func KnownMethod(m string) bool { return knownMethods[m] }

// MethodLabel is m when it is a known method, OtherMethod otherwise: a metric
// label or log field from a fixed set, whatever a client sends.
func MethodLabel(m string) string {
	if knownMethods[m] {
		return m
	}
	return OtherMethod
}

// MaxLogBytes is the most of a request-provided string a log line keeps.
const MaxLogBytes = 256

// Clip keeps at most MaxLogBytes of s, cut at a character boundary, with
// "…" appended when it cut: what a log line keeps of a string a client sent.
func Clip(s string) string {
	if len(s) <= MaxLogBytes {
		return s
	}
	cut := MaxLogBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
