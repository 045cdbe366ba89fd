package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"
	"sync"
)

// mails keeps the mails the sink accepted, undecoded, to check their
// attachments after the burst: decoding them as they arrive would spend
// the measured process's CPU.
type mails struct {
	mu   sync.Mutex
	msgs []mailBody
}

type mailBody struct {
	h    textproto.MIMEHeader
	body []byte
}

func (m *mails) see(h textproto.MIMEHeader, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, mailBody{h, bytes.Clone(body)})
}

// check verifies that at least n mails carry the same attachments, one per
// format, and returns their checksum (SHA-256 of the sorted names and
// digests): every subscriber got the same files, each whole. The demo's own
// subscription may attach something else.
func (m *mails) check(n, formats int) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bySum := map[string]int{}
	for i, mb := range m.msgs {
		sums, err := attachments(mb.h.Get("Content-Type"), mb.body, mb.h.Get("Content-Transfer-Encoding"))
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

// attachments returns "name:sha256" of each attachment in a MIME body (not
// of the images shown inline).
func attachments(contentType string, body []byte, encoding string) ([]string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(mt, "multipart/") {
		var out []string
		r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(p)
			if err != nil {
				return nil, err
			}
			if disp, dp, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil && disp == "attachment" {
				data := b
				if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
					if data, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(b))); err != nil {
						return nil, fmt.Errorf("attachment %s: %w", dp["filename"], err)
					}
				}
				out = append(out, fmt.Sprintf("%s:%x", dp["filename"], sha256.Sum256(data)))
				continue
			}
			sub, err := attachments(p.Header.Get("Content-Type"), b, p.Header.Get("Content-Transfer-Encoding"))
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return nil, nil
}
