package email

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	netmail "net/mail"
	"os"
	"strings"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/wneessen/go-mail"
)

// DKIMSettings is the dkim key of the smtp section: the key that signs
// outgoing mail (RFC 6376).
type DKIMSettings struct {
	// Domain is the signing domain, the d= tag; the public key is looked up
	// under it. Default empty: the domain of from.
	Domain string `yaml:"domain"`
	// Selector names the key under the domain: its public key is the TXT
	// record at <selector>._domainkey.<domain>. Required with keyFile.
	Selector string `yaml:"selector"`
	// KeyFile is a PEM file holding the private key: RSA in PKCS#1 or PKCS#8
	// form (at least 1024 bits; 2048 advised), or Ed25519 in PKCS#8 form. It
	// is read when the sender starts. Default empty: mail is not signed.
	KeyFile string `yaml:"keyFile"`
	// Headers are the header fields the signature covers. Default From, To,
	// Subject, Date, Message-ID, MIME-Version, Content-Type, List-Unsubscribe,
	// List-Unsubscribe-Post; From, List-Unsubscribe and List-Unsubscribe-Post
	// (RFC 8058) are signed whether listed or not; an empty list means the
	// default. A field listed but absent from a message is signed as absent:
	// adding it on the way breaks the signature.
	Headers []string `yaml:"headers"`
}

// defaultDKIMHeaders returns the header fields signed by default.
func defaultDKIMHeaders() []string {
	return []string{"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type",
		"List-Unsubscribe", "List-Unsubscribe-Post"}
}

// alwaysSigned are signed whatever the list says: RFC 6376 requires From and
// RFC 8058 the one-click unsubscribe pair.
var alwaysSigned = []string{"From", "List-Unsubscribe", "List-Unsubscribe-Post"}

// check names the wrong dkim key, as dkim.<key>; from is the smtp section's
// sender address, whose domain is the default signing domain.
func (s DKIMSettings) check(from string) error {
	var errs []error
	if s.KeyFile == "" {
		if s.Selector != "" || s.Domain != "" {
			errs = append(errs, errors.New("dkim.keyFile: is required when dkim.selector or dkim.domain is set (leave all three empty to send unsigned mail)"))
		}
	} else {
		if s.Selector == "" {
			errs = append(errs, errors.New("dkim.selector: is required when dkim.keyFile is set"))
		} else if !dnsName(s.Selector, 1) {
			errs = append(errs, fmt.Errorf("dkim.selector: %q is not a DNS label such as herald2026", s.Selector))
		}
		if _, err := s.domain(from); err != nil {
			errs = append(errs, err)
		}
	}
	for i, h := range s.Headers {
		switch {
		case !fieldName(h):
			errs = append(errs, fmt.Errorf("dkim.headers[%d]: %q is not a header field name", i, h))
		case strings.EqualFold(h, "DKIM-Signature"):
			errs = append(errs, fmt.Errorf("dkim.headers[%d]: the DKIM-Signature field cannot be signed by itself", i))
		}
	}
	return errors.Join(errs...)
}

// domain is the signing domain: Domain, or else the domain of from.
func (s DKIMSettings) domain(from string) (string, error) {
	if s.Domain != "" {
		if !dnsName(s.Domain, 2) {
			return "", fmt.Errorf("dkim.domain: %q is not a domain name such as example.com", s.Domain)
		}
		return strings.ToLower(s.Domain), nil
	}
	addr, err := netmail.ParseAddress(from)
	if err != nil {
		return "", fmt.Errorf("dkim.domain: is required: from %q has no domain to sign for", from)
	}
	_, d, _ := strings.Cut(addr.Address, "@")
	if !dnsName(d, 2) {
		return "", fmt.Errorf("dkim.domain: is required: the domain of from, %q, is not one DNS can publish a key under", d)
	}
	return strings.ToLower(d), nil
}

// headers is the list of fields to sign: Headers or the default ones, with
// those that must always be signed added when missing.
func (s DKIMSettings) headers() []string {
	hs := append([]string(nil), s.Headers...)
	if len(hs) == 0 {
		hs = defaultDKIMHeaders()
	}
	for _, must := range alwaysSigned {
		found := false
		for _, h := range hs {
			found = found || strings.EqualFold(h, must)
		}
		if !found {
			hs = append(hs, must)
		}
	}
	return hs
}

// dnsName reports whether s is a DNS name of at least minLabels labels of
// letters, digits and inner hyphens.
func dnsName(s string, minLabels int) bool {
	if len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	if len(labels) < minLabels {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// fieldName reports whether s is an RFC 5322 header field name.
func fieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < 33 || s[i] > 126 || s[i] == ':' {
			return false
		}
	}
	return true
}

// dkimSigner signs composed messages; a nil *dkimSigner signs nothing.
type dkimSigner struct {
	opts dkim.SignOptions
}

// newDKIM reads the key of s and returns the signer for mail sent as from;
// nil, nil when no key is configured. Its errors name the key as
// smtp.dkim.<key> and never quote the key file.
func newDKIM(s DKIMSettings, from string) (*dkimSigner, error) {
	if s.KeyFile == "" {
		return nil, nil
	}
	if err := s.check(from); err != nil {
		lines := strings.Split(err.Error(), "\n")
		for i := range lines {
			lines[i] = "smtp." + lines[i]
		}
		return nil, errors.New(strings.Join(lines, "\n"))
	}
	domain, _ := s.domain(from)
	key, err := readDKIMKey(s.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("smtp.dkim.keyFile: %s: %w", s.KeyFile, err)
	}
	return &dkimSigner{opts: dkim.SignOptions{
		Domain:                 domain,
		Selector:               s.Selector,
		Signer:                 key,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
		HeaderKeys:             s.headers(),
	}}, nil
}

// readDKIMKey reads an RSA or Ed25519 private key from a PEM file. Its errors
// say what is wrong with the file without quoting it, nor the parser's
// messages, which may quote the bytes they stumbled on.
func readDKIMKey(path string) (crypto.Signer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in the message
		}
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("no PEM block found; want a private key in PEM form")
	}
	if _, encrypted := block.Headers["Proc-Type"]; encrypted || block.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errors.New("the key is encrypted; herald needs it unencrypted")
	}
	var key any
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("the PEM block is %q; want \"RSA PRIVATE KEY\" (PKCS#1) or \"PRIVATE KEY\" (PKCS#8)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("the %q PEM block does not parse as a private key", block.Type)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if bits := k.N.BitLen(); bits < 1024 {
			return nil, fmt.Errorf("the RSA key has %d bits; DKIM needs at least 1024 (2048 advised)", bits)
		}
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	default:
		return nil, fmt.Errorf("the key is a %T; DKIM signs with RSA or Ed25519 keys", key)
	}
}

// sign adds a DKIM-Signature header to msg, which must be complete: a header
// or part added after sign is not covered, and breaks the signature if it
// is one of the signed fields or in the body.
//
// The signature covers bytes, so the bytes signed must be those written
// afterwards. go-mail draws a random boundary for each multipart the first
// time a message is written and keeps it in the Msg for every later write
// (Msg.SetBoundary cannot stand in: it puts one boundary at every nesting
// level, and a mixed part nesting an alternative one then falls apart).
// Serialising the message here therefore fixes its boundaries, and a later
// WriteTo repeats the signed body and header fields, with the DKIM-Signature
// field added. Two things may still move: go-mail writes its preformatted
// fields (DKIM-Signature, List-Unsubscribe, List-Unsubscribe-Post) in map
// order, which DKIM does not mind as it picks the signed fields by name; and
// a file too large to keep encoded (encodedFiles) is read at each write, so
// it must not change before the message is sent. The kind's own
// multiparts keep the boundaries drawn when the message was composed.
func (d *dkimSigner) sign(msg *message) error {
	if d == nil {
		return nil
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		return fmt.Errorf("dkim: write message: %w", err)
	}
	s, err := dkim.NewSigner(&d.opts) // reads the options only: concurrent sends may share them
	if err != nil {
		return fmt.Errorf("dkim: %w", err)
	}
	if _, err := s.Write(buf.Bytes()); err != nil {
		_ = s.Close()
		return fmt.Errorf("dkim: sign: %w", err)
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("dkim: sign: %w", err)
	}
	// Signature is "DKIM-Signature: v=1; ...\r\n b=..." with folded lines;
	// go-mail writes a preformatted value as it is, followed by CRLF.
	name, value, _ := strings.Cut(s.Signature(), ":")
	msg.SetGenHeaderPreformatted(mail.Header(name), strings.TrimSpace(value))
	return nil
}
