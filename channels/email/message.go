package email

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/heraldhq/herald/channels"
)

const userAgent = "Herald"

// composer builds the RFC 5322 message of a delivery; Sender and Outbox
// share it so that both produce the same bytes for the same delivery.
type composer struct {
	from   string
	domain string
	now    func() time.Time
	dkim   *dkimSigner // signs the finished message; nil signs none
	// maxFiles is smtp.maxAttachmentBytes: files beyond it in total travel
	// as download links (channels.FitFiles); 0 attaches them whatever their size.
	maxFiles int64
	files    *encodedFiles
}

func newComposer(from string, now func() time.Time, dkim *dkimSigner) (composer, error) {
	addr, err := netmail.ParseAddress(from)
	if err != nil {
		return composer{}, fmt.Errorf("from address %q: %w", from, err)
	}
	_, domain, _ := strings.Cut(addr.Address, "@")
	if now == nil {
		now = time.Now
	}
	return composer{from: from, domain: domain, now: now, dkim: dkim, files: newEncodedFiles(defaultEncodedBytes)}, nil
}

// messageID is the Message-ID of a delivery without its angle brackets.
func (c composer) messageID(deliveryID string) string {
	return token(deliveryID) + "@" + c.domain
}

// compose builds the message. Its errors are permanent: the same delivery
// would fail the same way every time.
func (c composer) compose(m channels.Message) (*message, error) {
	if m.DeliveryID == "" {
		return nil, channels.Permanent(errors.New("message has no delivery id"))
	}
	if _, err := channels.FitFiles(&m, c.maxFiles, "smtp.maxAttachmentBytes"); err != nil {
		return nil, err
	}
	msg := mail.NewMsg()
	if err := msg.From(c.from); err != nil {
		return nil, channels.Permanent(fmt.Errorf("from address: %w", err))
	}
	var to Address
	if err := m.Channel.Decode(&to); err != nil {
		return nil, err
	}
	if err := msg.To(to.To); err != nil {
		return nil, channels.Permanent(fmt.Errorf("recipient %q: %w", to.To, err))
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(c.messageID(m.DeliveryID))
	msg.SetDateWithValue(c.now())
	msg.SetUserAgent(userAgent)
	var doc string
	if m.HTML != "" || m.Text != "" {
		doc = document(m, to.To)
	}
	switch {
	case m.Text == "" && doc != "":
		msg.SetBodyString(mail.TypeTextHTML, doc)
	default:
		msg.SetBodyString(mail.TypeTextPlain, m.Text+textFooter(m, to.To))
		if doc != "" {
			msg.AddAlternativeString(mail.TypeTextHTML, doc)
		}
	}
	if err := unsubscribeHeaders(msg, m.Links.Unsubscribe); err != nil {
		return nil, err
	}
	out := &message{Msg: msg}
	for _, a := range m.Attachments {
		if a.ContentID != "" && m.HTML == "" {
			continue // an image of an HTML body the message does not have
		}
		f, err := c.attach(a)
		if err != nil {
			return nil, err
		}
		if a.ContentID != "" {
			out.inline = append(out.inline, f)
		} else {
			out.files = append(out.files, f)
		}
	}
	if len(out.inline) > 0 {
		out.related = newBoundary()
	}
	if len(out.files) > 0 {
		out.mixed = newBoundary()
	}
	// Signing stays the last step: the signature covers what is added above.
	if err := c.dkim.sign(out); err != nil {
		return nil, channels.Permanent(err)
	}
	return out, nil
}

// attach checks a file and returns its part: an attachment, or, with a
// content ID, an image of the HTML body. A missing file is permanent, any
// other failure to stat it may pass.
func (c composer) attach(a channels.Attachment) (attachment, error) {
	if !validContentID(a.ContentID) {
		return attachment{}, channels.Permanent(fmt.Errorf("attachment %q: content ID %q is not one a header can carry", a.Name, a.ContentID))
	}
	info, err := os.Stat(a.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return attachment{}, channels.Permanent(fmt.Errorf("attachment %q: %w", a.Name, err))
	case err != nil:
		return attachment{}, fmt.Errorf("attachment %q: %w", a.Name, err)
	case !info.Mode().IsRegular():
		return attachment{}, channels.Permanent(fmt.Errorf("attachment %q: %s is not a regular file", a.Name, a.Path))
	}
	name := a.Name
	if name == "" {
		name = filepath.Base(a.Path)
	}
	return attachment{header: fileHeader(name, a.ContentType, a.ContentID), encoded: c.files.get(a.Path, info), path: a.Path}, nil
}

// validContentID reports whether id can stand between the angle brackets of
// a Content-ID field: printable ASCII without spaces or brackets, or empty.
func validContentID(id string) bool {
	for _, r := range id {
		if r <= ' ' || r >= 127 || r == '<' || r == '>' {
			return false
		}
	}
	return len(id) <= 256
}

// unsubscribeHeaders sets List-Unsubscribe to the message's unsubscribe
// link, and, when it is https, List-Unsubscribe-Post for the one-click POST
// of RFC 8058, which mailbox providers ask of bulk senders (RFC 8058 allows
// one-click only over https).
func unsubscribeHeaders(msg *mail.Msg, link string) error {
	switch {
	case link == "":
		return nil
	case strings.HasPrefix(link, "https://"):
		if err := msg.SetListUnsubscribeOneClick(link); err != nil {
			return channels.Permanent(fmt.Errorf("unsubscribe link: %w", err))
		}
	default:
		msg.SetListUnsubscribe(link)
	}
	return nil
}

// token turns a delivery id into a string that is both a valid Message-ID
// left part (RFC 5322 dot-atom-text) and a safe file name. An id that is
// already both is used as it is, so it stays readable; any other id is
// replaced by a hash of it, which has a '=' that plain ids never have.
func token(id string) string {
	if plainToken(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256=" + hex.EncodeToString(sum[:20])
}

const maxPlainToken = 128

func plainToken(id string) bool {
	if id == "" || len(id) > maxPlainToken || id[0] == '.' || id[len(id)-1] == '.' || strings.Contains(id, "..") {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}
