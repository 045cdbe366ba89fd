package mailcheck

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/textproto"
	"slices"
	"strings"
	"sync"

	"github.com/heraldhq/herald/channels/channeltest"
)

// Mails keeps the mails the sink accepted, undecoded, to check their
// attachments after the burst: decoding them as they arrive would spend
// the measured process's CPU.
type Mails struct {
	mu   sync.Mutex
	msgs []mailBody
}

type mailBody struct {
	h    textproto.MIMEHeader
	body []byte
}

// See keeps a mail.
func (m *Mails) See(h textproto.MIMEHeader, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, mailBody{h, bytes.Clone(body)})
}

// Check verifies that at least n mails carry the same attachments, one per
// format, and returns their checksum (SHA-256 of the sorted names and
// digests): every subscriber got the same files, each whole. The demo's own
// subscription may attach something else.
func (m *Mails) Check(n, formats int) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bySum := map[string]int{}
	for i, mb := range m.msgs {
		sums, err := attachments(mb.h, mb.body)
		if err != nil {
			return "", fmt.Errorf("mail %d: %w", i, err)
		}
		if len(sums) != formats {
			continue
		}
		slices.Sort(sums)
		bySum[fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Join(sums, ";"))))]++
	}
	for sum, k := range bySum {
		if k >= n {
			return sum, nil
		}
	}
	return "", fmt.Errorf("no %d of the %d mails carry the same %d attachments (sets seen, by checksum: %v)", n, len(m.msgs), formats, bySum)
}

// attachments returns "name:sha256" of each file a mail attaches (not of
// the images it shows inline), read by the parser the tests read mails with
// from the headers it needs and the body as the sink kept it.
func attachments(h textproto.MIMEHeader, body []byte) ([]string, error) {
	var raw bytes.Buffer
	for _, k := range []string{"Content-Type", "Content-Transfer-Encoding"} {
		if v := h.Get(k); v != "" {
			fmt.Fprintf(&raw, "%s: %s\r\n", k, v)
		}
	}
	raw.WriteString("\r\n")
	raw.Write(body)
	m, err := channeltest.ParseEmail(raw.Bytes())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range m.Attachments {
		if !a.Inline {
			out = append(out, fmt.Sprintf("%s:%x", a.Name, sha256.Sum256(a.Data)))
		}
	}
	return out, nil
}
