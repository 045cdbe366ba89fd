package httpguard

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// follow feeds in to a framer in pieces of size n and returns it with the
// offsets at which it saw header blocks begin and end.
func follow(in []byte, n int) (*framer, []int64) {
	f := newFramer()
	var ends []int64
	f.onHeader = func(start, end int64) { ends = append(ends, start, end) }
	for len(in) > 0 {
		k := min(n, len(in))
		f.feed(in[:k])
		in = in[k:]
	}
	return f, ends
}

// goFraming reads in as a server reads requests with net/http's parser, and
// returns where each header block that parsed began and ended, up to the first error.
func goFraming(in []byte) []int64 {
	cr := &countingReader{r: bytes.NewReader(in)}
	br := bufio.NewReaderSize(cr, 4096)
	var ends []int64
	for {
		start := cr.n - int64(br.Buffered())
		req, err := http.ReadRequest(br)
		if err != nil {
			return ends
		}
		ends = append(ends, start, cr.n-int64(br.Buffered()))
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return ends[:len(ends)-2] // a body net/http cannot read ends the connection
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

const (
	get         = "GET /svc/projects HTTP/1.1\r\nHost: h\r\nAccept: application/json\r\n\r\n"
	post        = "POST /svc/projects HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"b c\"}"
	chunked     = "POST /x HTTP/1.1\r\nHost: h\r\ntransfer-encoding:  Chunked \r\n\r\n5;ext=1\r\nhello\r\n3  \r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n"
	http10      = "GET / HTTP/1.0\r\nContent-Length: 2\r\n\r\nokGET / HTTP/1.1\r\nHost: h\r\n\r\n"
	teAndCL     = "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	clAndTE     = "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\ncontent-length:5\r\n\r\n0\r\n\r\n"
	smuggled    = "GET /svc/account/profile/current HTTP/1.1\r\nHost: h\r\n\r\n"
	bigHeader   = "GET / HTTP/1.1\r\nHost: h\r\nCookie: "
	leadingCRLF = "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"
)

// TestFramerFollowsWhatNetHTTPReads: ordinary requests, pipelined and cut in any
// pieces, are followed to the same boundaries as net/http's and none is refused.
func TestFramerFollowsWhatNetHTTPReads(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"get":        get + get,
		"post":       post + get + post,
		"chunked":    chunked + get + chunked,
		"http/1.0":   http10,
		"big header": bigHeader + strings.Repeat("c", 200<<10) + "\r\n\r\n" + get,
		"long value": "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:" + strings.Repeat(" ", 100) + "3" + strings.Repeat("\t", 50) + "\r\n\r\nabc" + get,
	} {
		want := goFraming([]byte(in))
		for _, piece := range []int{1, 7, 4096, len(in)} {
			f, ends := follow([]byte(in), piece)
			if f.bad >= 0 || !equal(ends, want) {
				t.Errorf("%s in pieces of %d: header ends %v, refused from %d; net/http's %v", name, piece, ends, f.bad, want)
			}
		}
	}
}

// TestFramerRefusesTwoLengths: a request with both Transfer-Encoding and
// Content-Length is refused, in either order and any case, with what follows it,
// and not the request before it; after a body the framer cannot follow, the
// requests that come next are refused.
func TestFramerRefusesTwoLengths(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in  string
		bad int
	}{
		"te and cl":         {teAndCL + smuggled, 0},
		"cl and te":         {clAndTE + smuggled, 0},
		"after a get":       {get + teAndCL + smuggled, 1},
		"http/1.0":          {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled, 0},
		"cl that differ":    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd" + smuggled, 0},
		"te folded":         {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n ,identity\r\n\r\n0\r\n\r\n" + smuggled, 0},
		"two te":            {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, 0},
		"bad chunk":         {post + "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + smuggled, 2},
		"bare lf in chunks": {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n" + smuggled, 1},
	} {
		f, _ := follow([]byte(tc.in), 5)
		if f.bad != tc.bad {
			t.Errorf("%s: refused from request %d, want %d", name, f.bad, tc.bad)
		}
		for i := range 3 {
			if f.refused(i) != (i >= tc.bad) {
				t.Errorf("%s: request %d refused: %v", name, i, f.refused(i))
			}
		}
	}
	// The framer keeps a few small buffers, whatever it reads.
	f, _ := follow([]byte(bigHeader+strings.Repeat("c", 1<<20)), 4096)
	if f.bad >= 0 || f.headers != 0 {
		t.Errorf("a big header: refused from %d after %d headers", f.bad, f.headers)
	}
	if leading, _ := follow([]byte(leadingCRLF), 3); leading.bad >= 0 || leading.headers != 1 {
		t.Errorf("blank lines before a request: refused from %d after %d headers", leading.bad, leading.headers)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzFramer checks the framer against net/http's own parser: every request
// net/http reads, up to the first the framer refuses, begins and ends where
// the framer says its header does. A framer that lost its place without
// refusing could miss a request framed two ways.
func FuzzFramer(f *testing.F) {
	for _, s := range []string{get + post, chunked + get, http10, teAndCL + smuggled, clAndTE, leadingCRLF,
		post + "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;a=b\r\nx\r\n0\r\n\r\n" + get} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, piece uint16) {
		fr, ends := follow(in, int(piece%64)+1)
		want := goFraming(in)
		for i := 0; i < len(want); i += 2 {
			if fr.refused(i / 2) {
				return
			}
			if i+1 >= len(ends) || ends[i] != want[i] || ends[i+1] != want[i+1] {
				t.Fatalf("request %d: net/http's header spans %v, the framer's %v (all starts and ends); refused from %d",
					i/2, want, ends, fr.bad)
			}
		}
	})
}
