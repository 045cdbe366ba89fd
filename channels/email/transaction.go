package email

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"

	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/heraldhq/herald/channels"
)

// transact sends msg in one mail transaction on c: MAIL, a RCPT for each
// recipient and the message, nothing more; the message as BDAT chunks where
// the relay takes them (sendChunks), otherwise after DATA, which goes with
// MAIL and RCPT in one write where the relay takes that.
//
// go-mail's own transaction adds a NOOP before and a NOOP and RSET after:
// more round trips, and a failure of those after the relay accepted the mail
// would count as a failed send, and the mail would go again. A reused
// session the relay closed fails at MAIL instead, before anything was sent
// (closedBeforeSend). It also writes the message through net/textproto's
// dot-stuffing writer, a byte at a time, which for a mail with attachments
// was a fifth of the whole send's CPU; here the message goes through
// dotWriter, which copies it a run of lines at a time.
//
// A failed step is an *smtpError. A failure while the message is written
// leaves the DATA phase open: the caller closes the connection, and the
// relay drops the partial mail.
func transact(c *smtp.Client, msg *message, timeout time.Duration) error {
	from, err := msg.GetSender(false)
	if err != nil {
		return channels.Permanent(fmt.Errorf("sender: %w", err))
	}
	rcpts, err := msg.GetRecipients()
	if err != nil {
		return channels.Permanent(fmt.Errorf("recipients: %w", err))
	}
	if msg.Encoding() == string(mail.NoEncoding) {
		if ok, _ := c.Extension("8BITMIME"); !ok {
			return channels.Permanent(errors.New("an 8-bit message, and the relay does not take 8BITMIME"))
		}
	}
	if err := c.UpdateDeadline(timeout); err != nil {
		return &smtpError{step: stepConnection, err: err}
	}
	if chunking(c) {
		return sendChunks(c, from, rcpts, msg)
	}
	if err := openData(c, from, rcpts, msg.GetMessageID()); err != nil {
		return err
	}
	w := &dotWriter{w: c.Text.W}
	if _, err := msg.WriteTo(w); err != nil {
		return fmt.Errorf("write the message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write the message: %w", err)
	}
	if _, _, err := c.Text.ReadResponse(250); err != nil {
		return &smtpError{step: stepEndOfData, of: msg.GetMessageID(), err: err}
	}
	return nil
}

// openData sends MAIL, a RCPT for each recipient and DATA, and reads their
// replies: the relay then waits for the message. A relay that offers
// PIPELINING (RFC 2920) gets the three in one write and answers them
// together, one round trip for the lot rather than one for each; DATA may
// close such a group. Every reply is read, the ones after a refusal too, so
// that the session stays in step for an RSET and the next mail; the first
// refusal is the error.
func openData(c *smtp.Client, from string, rcpts []string, id string) error {
	if ok, _ := c.Extension("PIPELINING"); !ok {
		if err := c.Mail(from); err != nil {
			return &smtpError{step: stepMail, of: from, err: err}
		}
		for _, r := range rcpts {
			if err := c.Rcpt(r); err != nil {
				return &smtpError{step: stepRcpt, of: r, err: err}
			}
		}
		if err := command(c.Text, 354, "DATA"); err != nil {
			return &smtpError{step: stepData, of: id, err: err}
		}
		return nil
	}
	if err := writeEnvelope(c, from, rcpts); err != nil {
		return err
	}
	w := c.Text.W
	_, _ = w.WriteString("DATA\r\n")
	if err := w.Flush(); err != nil {
		return &smtpError{step: stepMail, of: from, err: err}
	}
	first, dataTaken := readReplies(c.Text, append(envelope(from, rcpts), reply{354, stepData, id}))
	if first == nil {
		return nil
	}
	// The relay took DATA after refusing the sender or a recipient, which
	// leaves it reading the message: only closing the session ends that
	// without a mail.
	first.dataOpen = dataTaken
	return first
}

// writeEnvelope writes MAIL and a RCPT for each recipient into c's buffer,
// for a pipelined write (a write error shows at the flush), unless an
// address would break its command.
func writeEnvelope(c *smtp.Client, from string, rcpts []string) error {
	if err := oneLine(from, rcpts); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(c.Text.W, "MAIL FROM:%s%s\r\n", from, mailParameters(c))
	for _, r := range rcpts {
		_, _ = fmt.Fprintf(c.Text.W, "RCPT TO:%s\r\n", r)
	}
	return nil
}

// reply is a reply a pipelined command waits for: the code wanted (a
// prefix, as textproto.Reader.ReadResponse takes it) and the step and
// subject a refusal is an error of.
type reply struct {
	code     int
	step, of string
}

// envelope is the replies to MAIL and a RCPT for each recipient.
func envelope(from string, rcpts []string) []reply {
	out := []reply{{250, stepMail, from}}
	for _, r := range rcpts {
		out = append(out, reply{25, stepRcpt, r})
	}
	return out
}

// readReplies reads the replies to pipelined commands in order and returns
// the first refusal, and whether the last reply came as wanted. Every reply
// is read, the ones after a refusal too, so that the session stays in step
// for an RSET and the next mail; a reply that does not come (replyCode 0)
// ends the reading: the session is gone, and no reply after it will come
// either.
func readReplies(t *textproto.Conn, want []reply) (first *smtpError, lastTaken bool) {
	for i, w := range want {
		_, _, err := t.ReadResponse(w.code)
		if err == nil {
			lastTaken = i == len(want)-1
			continue
		}
		if first == nil {
			first = &smtpError{step: w.step, of: w.of, err: err}
		}
		if replyCode(err) == 0 {
			return first, false
		}
	}
	return first, lastTaken
}

// oneLine refuses an address with a line break, which would end its command
// early and start another: go-mail's MAIL and RCPT refuse it the same way.
func oneLine(from string, rcpts []string) error {
	check := func(a string) error {
		if strings.ContainsAny(a, "\r\n") {
			return channels.Permanent(fmt.Errorf("address %q holds a line break", a))
		}
		return nil
	}
	if err := check(from); err != nil {
		return err
	}
	for _, r := range rcpts {
		if err := check(r); err != nil {
			return err
		}
	}
	return nil
}

// mailParameters are what go-mail's MAIL adds to the command for the
// relay's extensions: the 8-bit body and SMTPUTF8 it offers.
func mailParameters(c *smtp.Client) string {
	var p string
	if ok, _ := c.Extension("8BITMIME"); ok {
		p += " BODY=8BITMIME"
	}
	if ok, _ := c.Extension("SMTPUTF8"); ok {
		p += " SMTPUTF8"
	}
	return p
}

// replyCode is the code of the relay's reply err holds, or 0 when err is
// no reply: the connection failed, or closed, before one came.
func replyCode(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

// command sends cmd and reads its reply, which must have code want.
func command(t *textproto.Conn, want int, cmd string) error {
	id, err := t.Cmd("%s", cmd)
	if err != nil {
		return err
	}
	t.StartResponse(id)
	defer t.EndResponse(id)
	_, _, err = t.ReadResponse(want)
	return err
}

// The steps of a mail transaction an smtpError names.
const (
	stepConnection = "connection"
	stepMail       = "MAIL"
	stepRcpt       = "RCPT"
	stepData       = "DATA"
	stepEndOfData  = "end of data"
)

// smtpError is a step of a mail transaction that failed: the relay answered
// it with another code than the one wanted (err is a *textproto.Error), or no
// answer came.
type smtpError struct {
	step string
	of   string // what the step was about: the sender, the recipient or the Message-ID
	err  error
	// dataOpen is set when the relay is left reading the message's data:
	// the session cannot go on to another mail.
	dataOpen bool
}

func (e *smtpError) Error() string {
	if e.of == "" {
		return "smtp " + e.step + ": " + e.err.Error()
	}
	return "smtp " + e.step + " " + e.of + ": " + e.err.Error()
}
func (e *smtpError) Unwrap() error { return e.err }

// dotWriter writes a message as the data of an SMTP DATA command: every line
// ends in CRLF (a bare LF becomes one), a line that starts with a dot gets a
// second, and Close ends the data with a line of a single dot. Its output is
// net/textproto's DotWriter's byte for byte (FuzzDotWriterIsTextprotos),
// written a run of lines at a time rather than a byte at a time.
type dotWriter struct {
	w     *bufio.Writer
	state int
	// plain leaves out the dots: the line ends alone are made CRLF, as for
	// BDAT chunks, which the relay takes as they are.
	plain bool
}

// The states of a dotWriter: where the next byte falls.
const (
	dotBegin     = iota // nothing written yet
	dotLineStart        // after a line's end
	dotInLine           // within a line
	dotAfterCR          // right after a CR
)

func (d *dotWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		switch d.state {
		case dotBegin, dotLineStart:
			if b[0] == '.' && !d.plain {
				if err := d.w.WriteByte('.'); err != nil {
					return n - len(b), err
				}
			}
			d.state = dotInLine
		case dotAfterCR:
			// The byte after a CR is written as it is; only a LF ends the
			// line there.
			if err := d.w.WriteByte(b[0]); err != nil {
				return n - len(b), err
			}
			d.state = dotInLine
			if b[0] == '\n' {
				d.state = dotLineStart
			}
			b = b[1:]
			continue
		}
		if run := cleanLines(b); run > 0 {
			if _, err := d.w.Write(b[:run]); err != nil {
				return n - len(b), err
			}
			d.state = dotLineStart
			b = b[run:]
			continue
		}
		i := lineBreak(b)
		if i < 0 {
			if _, err := d.w.Write(b); err != nil {
				return n - len(b), err
			}
			break
		}
		if _, err := d.w.Write(b[:i]); err != nil {
			return n - len(b), err
		}
		var err error
		if b[i] == '\r' {
			err = d.w.WriteByte('\r')
			d.state = dotAfterCR
		} else {
			_, err = d.w.WriteString("\r\n")
			d.state = dotLineStart
		}
		if err != nil {
			return n - len(b), err
		}
		b = b[i+1:]
	}
	return n, nil
}

// cleanLines is the length of the longest start of b that goes out as it
// is: whole lines that end in CRLF, with no other CR or LF, and of which
// none but the first starts with a dot (the caller has seen to the first's
// start). Base64 lines are such lines, so that an attached file goes to
// the connection in one write, not one a line.
func cleanLines(b []byte) int {
	end := 0
	for end < len(b) && (end == 0 || b[end] != '.') {
		lf := bytes.IndexByte(b[end:], '\n')
		if lf < 1 || b[end+lf-1] != '\r' || bytes.IndexByte(b[end:end+lf-1], '\r') >= 0 {
			break
		}
		end += lf + 1
	}
	return end
}

// lineBreak is the index of the first CR or LF in b, or -1: what
// bytes.IndexAny(b, "\r\n") returns, which looks at a byte at a time where
// IndexByte's two scans are vectorised.
func lineBreak(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	end := lf
	if end < 0 {
		end = len(b)
	}
	if cr := bytes.IndexByte(b[:end], '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// Close ends the data and flushes.
func (d *dotWriter) Close() error {
	if err := d.end(); err != nil {
		return err
	}
	return d.w.Flush()
}

// end ends the last line, unless it has ended, and writes the line of a
// single dot, but when plain.
func (d *dotWriter) end() error {
	var end string
	switch d.state {
	case dotBegin, dotInLine:
		end = "\r\n"
	case dotAfterCR:
		end = "\n"
	}
	if !d.plain {
		end += ".\r\n"
	}
	_, err := d.w.WriteString(end)
	return err
}
