package email

import (
	"bufio"
	"errors"
	"fmt"
	"sync"

	"github.com/wneessen/go-mail/smtp"
)

// chunking reports whether c's relay takes a mail as BDAT chunks pipelined
// behind MAIL and RCPT: it offers CHUNKING (RFC 3030) and PIPELINING (RFC
// 2920).
func chunking(c *smtp.Client) bool {
	chunks, _ := c.Extension("CHUNKING")
	pipelining, _ := c.Extension("PIPELINING")
	return chunks && pipelining
}

// chunkBytes is the size of a BDAT chunk, but for the last: a report's mail
// goes in one chunk, a larger one in several.
const chunkBytes = 256 << 10

// chunkBuffers hold a chunk each while a mail is written.
var chunkBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, chunkBytes) }}

// sendChunks sends msg as MAIL, a RCPT for each recipient and the message in
// BDAT chunks, the last marked LAST, in one write, and then reads every
// reply: one round trip a mail. Unlike DATA, a chunk says its size, so the
// message goes as it is, without dots added for the relay to take out again,
// and a relay that refused the sender or a recipient still reads the chunks
// (and refuses them): the session stays in step whatever the replies. The
// first refusal is the error.
func sendChunks(c *smtp.Client, from string, rcpts []string, msg *message) error {
	if err := writeEnvelope(c, from, rcpts); err != nil {
		return err
	}
	chunks := &bdatWriter{w: c.Text.W}
	buf := chunkBuffers.Get().(*bufio.Writer)
	defer func() {
		buf.Reset(nil)
		chunkBuffers.Put(buf)
	}()
	buf.Reset(chunks)
	if err := writeChunks(msg, buf, chunks); err != nil {
		if chunks.err != nil {
			// The connection failed before the last chunk was whole, and
			// before any reply: the relay took nothing, and a reused
			// session it closed meanwhile may be left for another.
			return &smtpError{step: stepConnection, err: chunks.err}
		}
		return fmt.Errorf("write the message: %w", err)
	}
	if err := c.Text.W.Flush(); err != nil {
		return &smtpError{step: stepConnection, err: err}
	}
	// No reply at all, not even to MAIL, is taken as a session the relay
	// had closed (closedBeforeSend), as with DATA. Unlike DATA, the chunks
	// went before: a relay that took the whole mail and then lost the
	// connection before a byte of its replies arrived would get it again,
	// as one whose reply to the end of DATA is lost does.
	want, id := envelope(from, rcpts), msg.GetMessageID()
	for range chunks.n {
		want = append(want, reply{250, stepEndOfData, id})
	}
	if first, _ := readReplies(c.Text, want); first != nil {
		return first
	}
	return nil
}

// writeChunks writes msg through buf into chunks, the last marked LAST.
func writeChunks(msg *message, buf *bufio.Writer, chunks *bdatWriter) error {
	lines := &dotWriter{w: buf, plain: true}
	if _, err := msg.WriteTo(lines); err != nil {
		return err
	}
	if err := lines.end(); err != nil {
		return err
	}
	chunks.last = true // what buf holds now is the last chunk
	if err := buf.Flush(); err != nil {
		return err
	}
	return chunks.end()
}

// bdatWriter writes each write as a BDAT chunk to w, the first once last is
// set marked LAST, and counts them: each has its reply.
type bdatWriter struct {
	w     *bufio.Writer
	last  bool  // the next chunk is the last
	ended bool  // the last chunk is written
	n     int   // chunks written
	err   error // of the connection, when a write to it failed
}

func (b *bdatWriter) Write(p []byte) (int, error) {
	if b.ended {
		return 0, errors.New("bdat: a chunk after the last")
	}
	if b.last {
		_, _ = fmt.Fprintf(b.w, "BDAT %d LAST\r\n", len(p))
		b.ended = true
	} else {
		_, _ = fmt.Fprintf(b.w, "BDAT %d\r\n", len(p))
	}
	b.n++
	n, err := b.w.Write(p)
	if err != nil {
		b.err = err
	}
	return n, err
}

// end writes an empty last chunk when the last write left none.
func (b *bdatWriter) end() error {
	if b.ended {
		return nil
	}
	b.last = true
	_, err := b.Write(nil)
	return err
}
