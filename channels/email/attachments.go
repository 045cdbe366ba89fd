package email

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wneessen/go-mail"
)

// message is a mail as the kind writes it: go-mail writes the header and
// the text and HTML bodies; the kind wraps them in a multipart/related of
// its own with the HTML's inline images after them, and that in a
// multipart/mixed with the attached files after it. A file's base64 comes
// from an encodedFiles, so that the mails of one burst, which show the same
// chart and attach the same export, encode each once rather than once a
// mail. Every write of a message gives the same bytes (DKIM signs the
// first).
type message struct {
	*mail.Msg
	inline  []attachment // images the HTML shows, by Content-ID
	files   []attachment // attached files
	related string       // boundary of the multipart/related, when inline is not empty
	mixed   string       // boundary of the multipart/mixed, when files is not empty
}

// attachment is a file part of a message: its headers, and its content as
// base64 lines, kept (encoded) or read from path at each write.
type attachment struct {
	header  textproto.MIMEHeader
	encoded []byte
	path    string
}

// entity is a MIME entity: its content fields and what writes its body.
type entity struct {
	header textproto.MIMEHeader
	body   func(io.Writer) error
}

// WriteTo writes the message.
func (m *message) WriteTo(w io.Writer) (int64, error) {
	if len(m.inline) == 0 && len(m.files) == 0 {
		return m.Msg.WriteTo(w)
	}
	var inner bytes.Buffer
	if _, err := m.Msg.WriteTo(&inner); err != nil {
		return 0, err
	}
	head, body, ok := bytes.Cut(inner.Bytes(), []byte("\r\n\r\n"))
	if !ok {
		return 0, errors.New("write the message: no end to its header")
	}
	top, content := splitContentFields(head)
	e := entity{header: content, body: func(w io.Writer) error {
		_, err := w.Write(body)
		return err
	}}
	if len(m.inline) > 0 {
		e = multipartOf("related", m.related, e, m.inline)
	}
	if len(m.files) > 0 {
		e = multipartOf("mixed", m.mixed, e, m.files)
	}
	cw := &countWriter{w: w}
	if _, err := fmt.Fprintf(cw, "%s\r\nContent-Type: %s\r\n\r\n", top, e.header.Get("Content-Type")); err != nil {
		return cw.n, err
	}
	err := e.body(cw)
	return cw.n, err
}

// multipartOf is a multipart entity of the given subtype and boundary: first,
// then the files. A multipart/related names its first part's type (RFC 2387).
func multipartOf(subtype, boundary string, first entity, files []attachment) entity {
	ctype := "multipart/" + subtype + ";"
	if subtype == "related" {
		root, _, _ := strings.Cut(first.header.Get("Content-Type"), ";")
		ctype += ` type="` + strings.TrimSpace(root) + `";`
	}
	return entity{
		header: textproto.MIMEHeader{"Content-Type": {ctype + "\r\n boundary=" + boundary}},
		body: func(w io.Writer) error {
			mw := multipart.NewWriter(w)
			if err := mw.SetBoundary(boundary); err != nil {
				return err
			}
			return writeParts(mw, first, files)
		},
	}
}

// writeParts writes first and then the files as the parts of mw.
func writeParts(mw *multipart.Writer, first entity, files []attachment) error {
	part, err := mw.CreatePart(first.header)
	if err != nil {
		return err
	}
	if err := first.body(part); err != nil {
		return err
	}
	for _, f := range files {
		part, err := mw.CreatePart(f.header)
		if err != nil {
			return err
		}
		if f.encoded != nil {
			_, err = part.Write(f.encoded)
		} else {
			err = encodeFile(part, f.path)
		}
		if err != nil {
			return err
		}
	}
	return mw.Close()
}

// splitContentFields takes the Content-Type and Content-Transfer-Encoding
// fields out of a header (folded lines and all), and returns the rest as it
// was and those two unfolded, for the part they describe.
func splitContentFields(head []byte) (top []byte, content textproto.MIMEHeader) {
	content = textproto.MIMEHeader{}
	var out bytes.Buffer
	var name string // of the field the line belongs to, when taken
	for line := range strings.SplitSeq(string(head), "\r\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			if name != "" {
				vs := content[name]
				vs[len(vs)-1] += " " + strings.TrimSpace(line)
				continue
			}
		} else {
			k, v, _ := strings.Cut(line, ":")
			name = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k))
			if name == "Content-Type" || name == "Content-Transfer-Encoding" {
				content.Add(name, strings.TrimSpace(v))
				continue
			}
			name = ""
		}
		if out.Len() > 0 {
			out.WriteString("\r\n")
		}
		out.WriteString(line)
	}
	return out.Bytes(), content
}

// newBoundary is a multipart boundary no content can hold by chance.
func newBoundary() string {
	var b [15]byte
	_, _ = rand.Read(b[:])
	return "herald-" + hex.EncodeToString(b[:])
}

// fileHeader is the part header of a file attached as name, or, with a
// content ID, of an image the HTML body shows inline as cid:<contentID>.
func fileHeader(name, contentType, contentID string) textproto.MIMEHeader {
	if contentType == "" {
		contentType = mime.TypeByExtension(filepath.Ext(name))
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	enc := mime.QEncoding.Encode("UTF-8", sanitizeName(name))
	h := textproto.MIMEHeader{
		"Content-Type":              {fmt.Sprintf(`%s; name="%s"`, contentType, enc)},
		"Content-Disposition":       {fmt.Sprintf(`attachment; filename="%s"`, enc)},
		"Content-Transfer-Encoding": {"base64"},
	}
	if contentID != "" {
		h.Set("Content-Disposition", fmt.Sprintf(`inline; filename="%s"`, enc))
		h.Set("Content-ID", "<"+contentID+">")
	}
	return h
}

// sanitizeName replaces what a quoted file name may not hold, control
// characters, quotes and path separators among them, with "_".
func sanitizeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 32 || r == 127 || strings.ContainsRune(`"/:<>?\|`, r) {
			return '_'
		}
		return r
	}, name)
}

// lineBytes is how many bytes of a file make one base64 line of 76
// characters, the most RFC 2045 allows.
const lineBytes = 57

// encodeBase64 writes src to w as base64, in lines of 76 characters ending
// in CRLF.
func encodeBase64(w io.Writer, src io.Reader) error {
	var in [lineBytes * 64]byte
	var out [(lineBytes/3*4 + 2) * 64]byte
	for {
		n, rerr := io.ReadFull(src, in[:])
		o := 0
		for i := 0; i < n; i += lineBytes {
			line := in[i:min(i+lineBytes, n)]
			base64.StdEncoding.Encode(out[o:], line)
			o += base64.StdEncoding.EncodedLen(len(line))
			o += copy(out[o:], "\r\n")
		}
		if _, err := w.Write(out[:o]); err != nil {
			return err
		}
		switch rerr {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return nil
		default:
			return rerr
		}
	}
}

// encodeFile writes the file at path to w as base64 lines.
func encodeFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return encodeBase64(w, f)
}

// encodedFiles keeps the base64 of the files mails attach. A file is known
// by its path, size and modification time: a file written again under the
// same path is encoded again. The sends of a burst that ask for a file at
// once wait for one encoding of it. It holds at most max bytes of base64,
// forgets everything when a file would not fit, and keeps no file whose
// base64 is over max/8, which each mail then encodes as it is written.
type encodedFiles struct {
	mu    sync.Mutex
	max   int64
	size  int64
	files map[fileKey]*encodedFile
	// encode writes a file's base64: encodeFile, but in tests.
	encode func(w io.Writer, path string) error
}

type fileKey struct {
	path     string
	size     int64
	modified time.Time
}

// encodedFile is a file's base64, there once done is closed; nil when the
// file could not be read as its stat described it.
type encodedFile struct {
	done chan struct{}
	b    []byte
}

// defaultEncodedBytes bounds each sender's encodedFiles: a burst's files
// several times over (a 100,000-row workbook is about 4 MB, 5 MB encoded).
const defaultEncodedBytes = 64 << 20

func newEncodedFiles(max int64) *encodedFiles {
	return &encodedFiles{max: max, files: map[fileKey]*encodedFile{}, encode: encodeFile}
}

// encodedLen is the length of the base64 lines of n bytes.
func encodedLen(n int64) int64 {
	lines := (n + lineBytes - 1) / lineBytes
	return (n+2)/3*4 + 2*lines
}

// get returns the base64 of the file at path, which info describes, or nil
// when it is too big to keep or cannot be read now (the mail then encodes
// it as it is written, and meets the error there).
func (c *encodedFiles) get(path string, info os.FileInfo) []byte {
	n := encodedLen(info.Size())
	if c == nil || n > c.max/8 {
		return nil
	}
	key := fileKey{path: path, size: info.Size(), modified: info.ModTime()}
	c.mu.Lock()
	f, ok := c.files[key]
	if !ok {
		if c.size+n > c.max {
			clear(c.files)
			c.size = 0
		}
		f = &encodedFile{done: make(chan struct{})}
		c.files[key] = f
		c.size += n
	}
	c.mu.Unlock()
	if ok {
		<-f.done
		return f.b
	}
	defer close(f.done)
	var buf bytes.Buffer
	buf.Grow(int(n))
	if err := c.encode(&buf, path); err != nil || int64(buf.Len()) != n {
		c.mu.Lock()
		if c.files[key] == f {
			delete(c.files, key)
			c.size -= n
		}
		c.mu.Unlock()
		return nil // gone, or written since its stat
	}
	f.b = buf.Bytes()
	return f.b
}

// countWriter counts what goes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
