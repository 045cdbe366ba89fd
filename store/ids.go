package store

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// idAlphabet is the characters of NewID's identifiers.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewHexID returns 24 random hex characters, the form of channel and
// subscription ids.
func NewHexID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// NewID returns a random identifier of n characters from [a-z0-9].
func NewID(n int) string {
	return string(appendRandom(make([]byte, 0, n), n))
}

// appendRandom appends n random characters of idAlphabet to out.
func appendRandom(out []byte, n int) []byte {
	want := len(out) + n
	buf := make([]byte, n)
	for len(out) < want {
		_, _ = rand.Read(buf) // never fails (crypto/rand)
		for _, c := range buf {
			if c < 252 && len(out) < want { // 252 = 7*36: no modulo bias
				out = append(out, idAlphabet[int(c)%len(idAlphabet)])
			}
		}
	}
	return out
}

// sortableTimeDigits is how many base-36 digits of the Unix millisecond
// begin a sortable id: enough until the year 5188.
const sortableTimeDigits = 9

// NewSortableID returns an identifier of 24 characters from [0-9a-z] that
// sorts after those made in earlier milliseconds: nine base-36 digits of the
// Unix millisecond, then 15 random characters (77 bits).
//
// Runs and deliveries have such ids. A burst adds tens of thousands of rows
// keyed by them to several indexes (the rows, their payloads, the outbox) and
// then updates them as they are sent: with random ids every row lands on a
// page of its own, all over each index, and each commit writes those pages to
// the log again; with ids in time order the rows of a burst share the pages
// at the end of each index.
func NewSortableID() string { return newSortableID(time.Now()) }

func newSortableID(t time.Time) string {
	out := make([]byte, 0, 24)
	ms := strconv.FormatInt(max(t.UnixMilli(), 0), 36)
	out = append(out, strings.Repeat("0", max(sortableTimeDigits-len(ms), 0))...)
	out = append(out, ms...)
	return string(appendRandom(out, 24-sortableTimeDigits))
}
