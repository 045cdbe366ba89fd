package egress

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

const (
	maxAnswer = 64 << 10 // bytes of an answer's body read
	maxQuoted = 200      // bytes of an answer's body the log quotes
)

// Answer is a receiver's answer to a post: its status, its headers and the
// start of its body.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Post sends req with t.RoundTrip rather than a Client, so that redirects
// are not followed and errors do not quote the URL, which may hold a token,
// and reads at most 64 KiB of the answer's body.
func Post(t http.RoundTripper, req *http.Request) (Answer, error) {
	resp, err := t.RoundTrip(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// OK says the receiver took the message: a 2xx.
func (a Answer) OK() bool { return a.Status >= 200 && a.Status < 300 }

// Refusal is the error a sender returns for an answer that is not OK, made
// of err, which says who answered what: 408, 429 and 5xx may pass later,
// after the answer's Retry-After if it gives one; anything else, a redirect
// included, never will.
func (a Answer) Refusal(err error, now time.Time) error {
	if a.Status >= 300 && a.Status < 400 {
		err = fmt.Errorf("%w: redirects are not followed", err)
	}
	if a.Status != http.StatusRequestTimeout && a.Status != http.StatusTooManyRequests && a.Status < 500 {
		return channels.Permanent(err)
	}
	if d, ok := RetryAfter(a.Header.Get("Retry-After"), now); ok {
		return channels.RetryAfter(err, d)
	}
	return err
}

// Excerpt is the start of the answer's body for the log, with each secret
// of four bytes or more redacted, should the answer echo it.
func (a Answer) Excerpt(secrets ...string) string {
	text := strings.TrimSpace(string(a.Body))
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	if len(text) > maxQuoted {
		return Cut(text, maxQuoted) + "…"
	}
	return text
}

// Cut returns at most n bytes of s, not ending inside a UTF-8 sequence.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
