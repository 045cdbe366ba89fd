package channeltest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
)

// Email is a received message: its envelope as the SMTP session gave it and
// its content as parsed from RFC 5322 and MIME.
type Email struct {
	MailFrom    string   // envelope sender (MAIL FROM)
	RcptTo      []string // envelope recipients (RCPT TO)
	Header      mail.Header
	MessageID   string // Message-ID header as sent, angle brackets included
	From        string
	To          []string // addresses of the To header
	Subject     string   // decoded
	Date        time.Time
	Text        string // first text/plain part, line breaks as \n
	HTML        string // first text/html part, line breaks as \n
	Attachments []EmailAttachment
	Raw         []byte
	Received    time.Time // when the server accepted it (SMTPServer)
}

// EmailAttachment is one decoded attachment of an Email.
type EmailAttachment struct {
	Name        string
	ContentType string
	Data        []byte
	// ContentID is the part's Content-ID without angle brackets: the HTML
	// shows it inline as cid:<ContentID>.
	ContentID string
	Inline    bool // Content-Disposition: inline
}

// maxMIMEDepth bounds how deep ParseEmail follows nested multiparts.
const maxMIMEDepth = 8

var errTooDeep = errors.New("MIME parts nested too deep")

// ParseEmail parses an RFC 5322 message with MIME parts: headers, subject,
// the first text and HTML bodies and the attachments.
func ParseEmail(raw []byte) (Email, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Email{}, fmt.Errorf("read message: %w", err)
	}
	var dec mime.WordDecoder
	e := Email{Header: msg.Header, Raw: raw, MessageID: strings.TrimSpace(msg.Header.Get("Message-ID"))}
	if e.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return Email{}, fmt.Errorf("decode subject: %w", err)
	}
	if from, err := mail.ParseAddress(msg.Header.Get("From")); err == nil {
		e.From = from.Address
	}
	if to, err := msg.Header.AddressList("To"); err == nil {
		for _, a := range to {
			e.To = append(e.To, a.Address)
		}
	}
	if d, err := msg.Header.Date(); err == nil {
		e.Date = d
	}
	if err := e.walk(msg.Header, msg.Body, 0); err != nil {
		return Email{}, err
	}
	return e, nil
}

// header is what mail.Header and textproto.MIMEHeader have in common.
type header interface{ Get(key string) string }

// walk reads one MIME entity and what it nests.
func (e *Email) walk(h header, body io.Reader, depth int) error {
	if depth > maxMIMEDepth {
		return errTooDeep
	}
	ctype := h.Get("Content-Type")
	if ctype == "" {
		ctype = "text/plain"
	}
	mediatype, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("content type %q: %w", ctype, err)
	}
	if strings.HasPrefix(mediatype, "multipart/") {
		return e.walkMultipart(body, params["boundary"], depth)
	}
	data, err := decodeBody(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return fmt.Errorf("%s body: %w", mediatype, err)
	}
	disposition, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	switch {
	case disposition == "attachment" || name != "":
		var dec mime.WordDecoder
		if decoded, err := dec.DecodeHeader(name); err == nil {
			name = decoded
		}
		e.Attachments = append(e.Attachments, EmailAttachment{Name: name, ContentType: mediatype, Data: data,
			ContentID: strings.Trim(h.Get("Content-ID"), "<> "), Inline: disposition == "inline"})
	case mediatype == "text/plain" && e.Text == "":
		e.Text = normalizeNewlines(string(data))
	case mediatype == "text/html" && e.HTML == "":
		e.HTML = normalizeNewlines(string(data))
	}
	return nil
}

func (e *Email) walkMultipart(body io.Reader, boundary string, depth int) error {
	if boundary == "" {
		return errors.New("multipart without boundary")
	}
	mr := multipart.NewReader(body, boundary)
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("next part: %w", err)
		}
		if err := e.walk(p.Header, p, depth+1); err != nil {
			return err
		}
	}
}

// decodeBody undoes the content transfer encoding. Raw parts are read, so
// quoted-printable is decoded here as well.
func decodeBody(cte string, body io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		return io.ReadAll(base64.NewDecoder(base64.StdEncoding, body))
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(body))
	}
	return io.ReadAll(body)
}

// normalizeNewlines turns CRLF, and the bare CR that RFC 5322 forbids, into \n.
func normalizeNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
