package httpguard

import (
	"bytes"
	"strconv"
)

// framer follows the framing of the HTTP/1.x requests that arrive on one
// connection, as the bytes are read and before net/http parses them, to find
// a request that states its length two ways: Transfer-Encoding and
// Content-Length. net/http reads such a request as chunked and drops the
// Content-Length, so no handler can tell; a proxy in front that reads the
// Content-Length instead sees another request boundary, and a request
// smuggled after the body reaches the service as if the proxy had sent it.
//
// It keeps a few small buffers whatever the size of a header or body: a
// header block is scanned a line at a time for the two field names, a body is
// skipped by its length, a chunked body by its chunk sizes. Whatever it does
// not understand the way net/http does (a malformed line, a version other
// than 1.0 and 1.1) ends the tracking: that request and every later one on
// the connection are refused. net/http closes the connection on such input
// anyway, so no request that net/http would have served is lost.
type framer struct {
	state   frameState
	headers int   // header blocks ended so far: the index of the request being read
	bad     int   // index of the first request to refuse; -1 for none
	left    int64 // bytes left of a body or chunk

	// the request line
	spaces int
	proto  smallBuf
	http10 bool
	// the header block
	name     smallBuf
	value    smallBuf
	field    fieldKind
	lastSeen fieldKind // the field of the line before, for continuation lines
	te, cl   int       // Transfer-Encoding and Content-Length lines; cl -1: lengths that differ
	teValue  smallBuf
	clValue  smallBuf
	spaceRun int // spaces and tabs held back inside a value: kept only when more follows
	// a chunk-size line
	digits  int
	size    uint64
	lineLen int

	// onHeader, when set, is told where each header block began and ended (tests).
	onHeader func(start, end int64)
	read     int64 // bytes fed so far
	start    int64 // where the request line began
}

type frameState uint8

const (
	sRequestStart frameState = iota // before a request line (CR and LF are skipped)
	sRequestLine
	sFieldStart // at the start of a header line
	sFieldName
	sFieldValue
	sSkipLine
	sHeaderEndLF // a CR ended the header block; its LF is next
	sBody
	sChunkSize
	sChunkSizeSpace // trailing whitespace after the chunk size
	sChunkExt
	sChunkSizeLF
	sChunkData
	sChunkDataCR
	sChunkDataLF
	sTrailerStart
	sTrailerLine
	sTrailerEndLF
	sDone // refusing: nothing more is followed
)

type fieldKind uint8

const (
	fieldOther fieldKind = iota
	fieldTE
	fieldCL
)

// maxChunkLine is net/http's bound on a chunk-size line.
const maxChunkLine = 4096

func newFramer() *framer { return &framer{bad: -1} }

// refused reports whether request i (from 0) of the connection is to be refused.
func (f *framer) refused(i int) bool { return f.bad >= 0 && i >= f.bad }

// fail stops following the connection: the request being read and all
// later ones are refused.
func (f *framer) fail() {
	if f.bad < 0 {
		f.bad = f.headers
	}
	f.state = sDone
}

// feed follows the bytes p, read from the connection.
func (f *framer) feed(p []byte) {
	for len(p) > 0 && f.state != sDone {
		n := f.skip(p)
		if n == 0 {
			f.step(p[0])
			n = 1
		}
		f.read += int64(n)
		p = p[n:]
	}
}

// skip passes over the body bytes at the head of p at once; it returns how many.
func (f *framer) skip(p []byte) int {
	if f.state != sBody && f.state != sChunkData {
		return 0
	}
	n := int(min(int64(len(p)), f.left))
	f.left -= int64(n)
	if f.left == 0 {
		if f.state == sBody {
			f.state = sRequestStart
		} else {
			f.state = sChunkDataCR
		}
	}
	return n
}

func (f *framer) step(b byte) {
	switch f.state {
	case sRequestStart:
		if b == '\r' || b == '\n' {
			return
		}
		f.startRequest()
		f.start, f.state = f.read, sRequestLine
		f.requestLine(b)
	case sRequestLine:
		f.requestLine(b)
	case sFieldStart, sFieldName, sFieldValue, sSkipLine, sHeaderEndLF:
		f.headerByte(b)
	default:
		f.bodyByte(b)
	}
}

func (f *framer) startRequest() {
	*f = framer{headers: f.headers, bad: f.bad, onHeader: f.onHeader, read: f.read}
}

// requestLine reads "METHOD TARGET PROTO": the protocol follows the second space.
func (f *framer) requestLine(b byte) {
	switch {
	case b == '\n':
		proto := bytes.TrimSuffix(f.proto.bytes(), []byte{'\r'})
		switch {
		case f.proto.over || f.spaces != 2:
			f.fail()
		case string(proto) == "HTTP/1.1":
			f.state = sFieldStart
		case string(proto) == "HTTP/1.0":
			f.http10, f.state = true, sFieldStart
		default:
			f.fail() // HTTP/2's preface, or what net/http refuses
		}
	case b == ' ':
		f.spaces++
	case f.spaces == 2:
		f.proto.add(b)
	}
}

func (f *framer) headerByte(b byte) {
	switch f.state {
	case sFieldStart:
		switch b {
		case '\r':
			f.state = sHeaderEndLF
		case '\n':
			f.endHeader()
		case ' ', '\t':
			// A continuation of the line before: net/http joins it to that
			// value, which no longer reads as a length or "chunked".
			if f.lastSeen != fieldOther {
				f.fail()
				return
			}
			f.state = sSkipLine
		default:
			f.name.reset()
			f.name.add(lower(b))
			f.state = sFieldName
		}
	case sHeaderEndLF:
		if b != '\n' {
			f.fail()
			return
		}
		f.endHeader()
	case sFieldName:
		switch b {
		case ':':
			f.field = fieldOther
			if !f.name.over {
				switch string(f.name.bytes()) {
				case "transfer-encoding":
					f.field = fieldTE
				case "content-length":
					f.field = fieldCL
				}
			}
			f.lastSeen = f.field
			if f.field == fieldOther {
				f.state = sSkipLine
				return
			}
			f.value.reset()
			f.state = sFieldValue
		case '\n':
			f.fail() // a line without a colon: net/http refuses the request
		default:
			f.name.add(lower(b))
		}
	case sFieldValue:
		f.valueByte(b)
	case sSkipLine:
		if b == '\n' {
			f.state = sFieldStart
		}
	}
}

// valueByte adds b to the value of a Transfer-Encoding or Content-Length
// line, without the whitespace around it, which net/http trims.
func (f *framer) valueByte(b byte) {
	switch b {
	case '\n':
		f.endField()
		f.spaceRun, f.state = 0, sFieldStart
	case ' ', '\t', '\r':
		if f.value.n > 0 {
			f.spaceRun = min(f.spaceRun+1, len(f.value.b)+1)
		}
	default:
		for ; f.spaceRun > 0; f.spaceRun-- {
			f.value.add(' ')
		}
		f.value.add(b)
	}
}

// endField notes a Transfer-Encoding or Content-Length line.
func (f *framer) endField() {
	v := f.value
	switch f.field {
	case fieldTE:
		f.te++
		f.teValue = v
	case fieldCL:
		if f.cl > 0 && (v.over || f.clValue.over || !bytes.Equal(v.bytes(), f.clValue.bytes())) {
			f.cl = -1 // lengths that differ: net/http refuses the request
			return
		}
		if f.cl >= 0 {
			f.cl++
			f.clValue = v
		}
	}
}

// endHeader ends a header block and decides how the body is framed, as net/http does.
func (f *framer) endHeader() {
	end := f.read + 1
	i := f.headers
	f.headers++
	if f.onHeader != nil {
		f.onHeader(f.start, end)
	}
	switch {
	case f.te > 0 && f.cl != 0:
		f.bad, f.state = i, sDone // two lengths: refused, and nothing after it is followed
		return
	case f.te > 0 && !f.http10:
		if f.te != 1 || f.teValue.over || !bytes.EqualFold(f.teValue.bytes(), []byte("chunked")) {
			f.headers = i // net/http answers 501 and closes: refuse from here
			f.fail()
			return
		}
		f.state, f.digits, f.size, f.lineLen = sChunkSize, 0, 0, 0
		return
	case f.cl < 0:
		f.headers = i
		f.fail()
		return
	case f.cl > 0:
		n, err := strconv.ParseUint(string(f.clValue.bytes()), 10, 63)
		if err != nil || f.clValue.over {
			f.headers = i
			f.fail()
			return
		}
		f.left = int64(n)
	}
	f.state = sRequestStart
	if f.left > 0 {
		f.state = sBody
	}
}

// bodyByte follows a chunked body's framing: size lines, the CRLF after each
// chunk's data, and the trailer after the last chunk.
func (f *framer) bodyByte(b byte) {
	if f.state >= sChunkSize && f.state <= sChunkSizeLF {
		if f.lineLen++; f.lineLen > maxChunkLine {
			f.fail()
			return
		}
	}
	switch f.state {
	case sChunkSize:
		switch d := hexDigit(b); {
		case d >= 0:
			if f.digits++; f.digits > 16 {
				f.fail()
				return
			}
			f.size = f.size<<4 | uint64(d)
		case f.digits == 0:
			f.fail()
		case b == ';':
			f.state = sChunkExt
		case b == ' ' || b == '\t':
			f.state = sChunkSizeSpace
		case b == '\r':
			f.state = sChunkSizeLF
		default:
			f.fail()
		}
	case sChunkSizeSpace:
		switch b {
		case ' ', '\t':
		case '\r':
			f.state = sChunkSizeLF
		default:
			f.fail()
		}
	case sChunkExt:
		switch b {
		case '\r':
			f.state = sChunkSizeLF
		case '\n':
			f.fail()
		}
	case sChunkSizeLF:
		if b != '\n' {
			f.fail()
			return
		}
		f.lineLen = 0
		if f.size == 0 {
			f.state = sTrailerStart
			return
		}
		f.left, f.state = int64(f.size), sChunkData
		if f.size > 1<<62 {
			f.fail()
		}
	case sChunkDataCR:
		f.expect(b, '\r', sChunkDataLF)
	case sChunkDataLF:
		if f.expect(b, '\n', sChunkSize) {
			f.digits, f.size = 0, 0
		}
	case sTrailerStart:
		switch b {
		case '\r':
			f.state = sTrailerEndLF
		case '\n':
			f.state = sRequestStart
		default:
			f.state = sTrailerLine
		}
	case sTrailerLine:
		if b == '\n' {
			f.state = sTrailerStart
		}
	case sTrailerEndLF:
		f.expect(b, '\n', sRequestStart)
	}
}

// expect moves to next when b is want, and stops following otherwise.
func (f *framer) expect(b, want byte, next frameState) bool {
	if b != want {
		f.fail()
		return false
	}
	f.state = next
	return true
}

func hexDigit(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'a' <= b && b <= 'f':
		return int(b-'a') + 10
	case 'A' <= b && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// smallBuf keeps the first 32 bytes written to it and whether there were more.
type smallBuf struct {
	b    [32]byte
	n    uint8
	over bool
}

func (s *smallBuf) add(c byte) {
	if int(s.n) == len(s.b) {
		s.over = true
		return
	}
	s.b[s.n] = c
	s.n++
}

func (s *smallBuf) bytes() []byte { return s.b[:s.n] }
func (s *smallBuf) reset()        { *s = smallBuf{} }
