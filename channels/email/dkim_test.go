package email

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/wneessen/go-mail"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
)

const (
	dkimTestFrom     = "Herald <herald@example.com>"
	dkimTestSelector = "herald"
	dkimTestRecord   = dkimTestSelector + "._domainkey.example.com"
)

// dkimTestKey is a private key in a PEM file and the DNS record of its public key.
type dkimTestKey struct {
	name, path, record string
}

// dkimTestKeys writes an RSA 2048 key in PKCS#1 and PKCS#8 form and an Ed25519
// key in PKCS#8 form into t's temporary folder.
func dkimTestKeys(t *testing.T) []dkimTestKey {
	t.Helper()
	dir := t.TempDir()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rpub, err := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaRecord := "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(rpub)
	epub, ek, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edRecord := "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(epub)
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return []dkimTestKey{
		{"rsa pkcs1", write("rsa1.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)), rsaRecord},
		{"rsa pkcs8", write("rsa8.pem", "PRIVATE KEY", dkimTestPKCS8(t, rk)), rsaRecord},
		{"ed25519 pkcs8", write("ed.pem", "PRIVATE KEY", dkimTestPKCS8(t, ek)), edRecord},
	}
}

func dkimTestPKCS8(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// dkimVerify verifies the one signature of raw with record as the DNS TXT
// record of herald._domainkey.example.com, and returns it.
func dkimVerify(t *testing.T, raw []byte, record string) (*dkim.Verification, error) {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{
		LookupTXT: func(name string) ([]string, error) {
			if name != dkimTestRecord {
				return nil, errors.New("no such record: " + name)
			}
			return []string{record}, nil
		},
	})
	if err != nil {
		t.Fatalf("dkim.Verify: %v", err)
	}
	if len(vs) != 1 {
		t.Fatalf("%d signatures, want 1", len(vs))
	}
	return vs[0], vs[0].Err
}

// dkimTestMessage is a message with a text body, an HTML alternative and two
// attachments, one of them binary.
func dkimTestMessage(t *testing.T) channels.Message {
	t.Helper()
	dir := t.TempDir()
	csv, bin := filepath.Join(dir, "r.csv"), filepath.Join(dir, "chart.bin")
	if err := os.WriteFile(csv, []byte("\"Region\",\"Revenue\"\n\"EU\",\"12\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff, 0xfe, '\r', '\n', '.', '\n'}, 0o600); err != nil {
		t.Fatal(err)
	}
	return channels.Message{
		DeliveryID: "sub-1.2026-03-01T08-00-00Z.c1",
		Channel:    channels.Channel{ID: "c1", Kind: Kind, Config: []byte(`{"to":"ops@example.com"}`)},
		Subject:    "Tržby klesly — €12",
		Text:       "Revenue fell.\nSee the attached report.\n.\nA line with trailing space \n",
		HTML:       "<p>Revenue <b>fell</b>.</p>\n<p>" + strings.Repeat("long line ", 20) + "</p>",
		Attachments: []channels.Attachment{
			{Name: "Revenue report.csv", ContentType: "text/csv", Path: csv},
			{Name: "chart.png", ContentType: "image/png", Path: bin},
		},
	}
}

func dkimTestSigner(t *testing.T, s DKIMSettings) *dkimSigner {
	t.Helper()
	d, err := newDKIM(s, dkimTestFrom)
	if err != nil {
		t.Fatalf("newDKIM: %v", err)
	}
	if d == nil {
		t.Fatal("newDKIM returned no signer for a key")
	}
	return d
}

// dkimTestCompose composes m, signed by d, and returns the message as written.
func dkimTestCompose(t *testing.T, d *dkimSigner, m channels.Message) []byte {
	t.Helper()
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	c, err := newComposer(dkimTestFrom, func() time.Time { return at }, d)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.compose(m)
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

// dkimTestFields returns the header fields of raw but those named drop, folded
// lines kept, sorted, and the body.
func dkimTestFields(raw []byte, drop string) ([]string, []byte) {
	head, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	var fields []string
	for line := range strings.SplitSeq(string(head), "\r\n") {
		if len(fields) > 0 && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
			fields[len(fields)-1] += "\r\n" + line
			continue
		}
		fields = append(fields, line)
	}
	fields = slices.DeleteFunc(fields, func(f string) bool {
		name, _, _ := strings.Cut(f, ":")
		return strings.EqualFold(name, drop)
	})
	slices.Sort(fields)
	return fields, body
}

func TestDKIMSignedMessageVerifies(t *testing.T) {
	t.Parallel()
	for _, k := range dkimTestKeys(t) {
		t.Run(k.name, func(t *testing.T) {
			d := dkimTestSigner(t, DKIMSettings{Selector: dkimTestSelector, KeyFile: k.path, Headers: defaultDKIMHeaders()})
			m := dkimTestMessage(t)
			raw := dkimTestCompose(t, d, m)

			v, err := dkimVerify(t, raw, k.record)
			if err != nil {
				t.Fatalf("signature does not verify: %v\n%s", err, raw)
			}
			if v.Domain != "example.com" {
				t.Errorf("d= %q, want example.com", v.Domain)
			}
			for _, h := range []string{"from", "to", "subject", "date", "message-id", "mime-version", "content-type",
				"list-unsubscribe", "list-unsubscribe-post"} {
				if !slices.ContainsFunc(v.HeaderKeys, func(k string) bool { return strings.EqualFold(k, h) }) {
					t.Errorf("h= %v does not sign %s", v.HeaderKeys, h)
				}
			}
			if n := bytes.Count(raw, []byte("DKIM-Signature:")); n != 1 {
				t.Errorf("%d DKIM-Signature fields, want 1", n)
			}
			if sig := string(raw); !strings.Contains(sig, "c=relaxed/relaxed;") || !strings.Contains(sig, "s=herald;") {
				t.Errorf("signature is not relaxed/relaxed with s=herald:\n%s", raw)
			}

			// The message is whole: signing changed nothing a reader sees.
			e, err := channeltest.ParseEmail(raw)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if e.Subject != m.Subject || e.HTML == "" || !strings.HasPrefix(e.Text, "Revenue fell.") || len(e.Attachments) != 2 {
				t.Errorf("parsed subject %q text %q html %q, %d attachments", e.Subject, e.Text, e.HTML, len(e.Attachments))
			}
		})
	}
}

// TestDKIMSignsTheBytesWritten shows what sign relies on: every later write
// of the message repeats the body and each header field it signed, and adds
// the DKIM-Signature field. Only the order of the fields go-mail keeps
// preformatted (in a map: DKIM-Signature, List-Unsubscribe and
// List-Unsubscribe-Post) changes from one write to the next, which DKIM
// allows: it picks the signed fields by name.
func TestDKIMSignsTheBytesWritten(t *testing.T) {
	t.Parallel()
	k := dkimTestKeys(t)[0]
	d := dkimTestSigner(t, DKIMSettings{Selector: dkimTestSelector, KeyFile: k.path, Headers: defaultDKIMHeaders()})
	c, err := newComposer(dkimTestFrom, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := dkimTestMessage(t)
	msg, err := c.compose(m)
	if err != nil {
		t.Fatal(err)
	}
	// An inline image (multipart/related, a third boundary) and the RFC 8058
	// headers, set with go-mail's own calls.
	msg.EmbedFile(m.Attachments[1].Path, mail.WithFileName("chart.png"), mail.WithFileContentID("chart"))
	if err := msg.SetListUnsubscribeOneClick("https://herald.example.com/unsubscribe/t1"); err != nil {
		t.Fatal(err)
	}
	var unsigned bytes.Buffer
	if _, err := msg.WriteTo(&unsigned); err != nil {
		t.Fatal(err)
	}
	wantFields, wantBody := dkimTestFields(unsigned.Bytes(), "")
	if err := d.sign(msg); err != nil {
		t.Fatalf("sign: %v", err)
	}
	var written bytes.Buffer
	for range 20 {
		written.Reset()
		if _, err := msg.WriteTo(&written); err != nil {
			t.Fatal(err)
		}
		fields, body := dkimTestFields(written.Bytes(), "DKIM-Signature")
		if !bytes.Equal(body, wantBody) {
			t.Fatalf("written body differs from the body signed:\n%s\n----\n%s", body, wantBody)
		}
		if !slices.Equal(fields, wantFields) {
			t.Fatalf("written header fields differ from those signed:\n%q\n----\n%q", fields, wantFields)
		}
		if _, err := dkimVerify(t, written.Bytes(), k.record); err != nil {
			t.Fatalf("signature does not verify: %v\n%s", err, written.Bytes())
		}
	}
	if !bytes.Contains(written.Bytes(), []byte("Content-Type: multipart/related;")) ||
		!bytes.Contains(written.Bytes(), []byte("\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n")) {
		t.Fatalf("the message lacks the inline image or the unsubscribe headers:\n%s", written.Bytes())
	}
	changed := bytes.Replace(written.Bytes(), []byte("/unsubscribe/t1"), []byte("/unsubscribe/t2"), 1)
	if _, err := dkimVerify(t, changed, k.record); err == nil {
		t.Fatal("the signature does not cover List-Unsubscribe")
	}
	changed = bytes.Replace(written.Bytes(), []byte("List-Unsubscribe=One-Click"), []byte("List-Unsubscribe=Two-Clicks"), 1)
	if _, err := dkimVerify(t, changed, k.record); err == nil {
		t.Fatal("the signature does not cover List-Unsubscribe-Post")
	}
}

func TestDKIMDetectsChanges(t *testing.T) {
	t.Parallel()
	for _, k := range dkimTestKeys(t) {
		t.Run(k.name, func(t *testing.T) {
			d := dkimTestSigner(t, DKIMSettings{Selector: dkimTestSelector, KeyFile: k.path, Headers: []string{"Subject"}})
			raw := dkimTestCompose(t, d, dkimTestMessage(t))
			if _, err := dkimVerify(t, raw, k.record); err != nil {
				t.Fatalf("the unchanged message does not verify: %v", err)
			}
			sep := bytes.Index(raw, []byte("\r\n\r\n"))
			changes := []struct {
				name   string
				change func([]byte) []byte
			}{
				{"one byte of the body", func(b []byte) []byte {
					i := sep + bytes.Index(b[sep:], []byte("Revenue fell"))
					b[i] = 'r'
					return b
				}},
				{"the subject", func(b []byte) []byte {
					return bytes.Replace(b, []byte("\r\nSubject: "), []byte("\r\nSubject: Re: "), 1)
				}},
				{"From, signed though not listed", func(b []byte) []byte {
					return bytes.Replace(b, []byte("<herald@example.com>"), []byte("<herald@examp1e.com>"), 1)
				}},
				{"a List-Unsubscribe added", func(b []byte) []byte {
					return append([]byte("List-Unsubscribe: <https://evil.example/u>\r\n"), b...)
				}},
			}
			for _, c := range changes {
				t.Run(c.name, func(t *testing.T) {
					changed := c.change(bytes.Clone(raw))
					if bytes.Equal(changed, raw) {
						t.Fatal("the change changed nothing")
					}
					if _, err := dkimVerify(t, changed, k.record); err == nil {
						t.Fatal("the changed message still verifies")
					}
				})
			}
		})
	}
}

// TestDKIMThroughTheSenders sends through the Outbox and the SMTP Sender that
// Descriptor.NewSender builds from the smtp settings, and verifies what they
// wrote and what the relay received.
func TestDKIMThroughTheSenders(t *testing.T) {
	t.Parallel()
	for _, k := range dkimTestKeys(t) {
		t.Run(k.name, func(t *testing.T) {
			m := dkimTestMessage(t)
			dkimSet := DKIMSettings{Selector: dkimTestSelector, KeyFile: k.path, Headers: defaultDKIMHeaders()}

			t.Run("outbox", func(t *testing.T) {
				s := DefaultSettings()
				s.From, s.DKIM = dkimTestFrom, dkimSet
				if err := s.Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				snd, closer, err := Descriptor.NewSender(s, channels.Env{Data: t.TempDir()})
				if err != nil {
					t.Fatalf("NewSender: %v", err)
				}
				if closer != nil {
					t.Cleanup(func() { _ = closer() })
				}
				o, ok := snd.(*Outbox)
				if !ok {
					t.Fatalf("NewSender without a host gave a %T", snd)
				}
				if _, err := o.Send(t.Context(), m); err != nil {
					t.Fatalf("Send: %v", err)
				}
				raw, err := os.ReadFile(o.Path(m.DeliveryID))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := dkimVerify(t, raw, k.record); err != nil {
					t.Fatalf("the .eml does not verify: %v", err)
				}
			})

			t.Run("smtp", func(t *testing.T) {
				srv := channeltest.NewSMTPServer(t)
				s := DefaultSettings()
				s.Host, s.Port, s.TLSPolicy, s.From, s.DKIM = srv.Host(), srv.Port(), "none", dkimTestFrom, dkimSet
				if err := s.Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				snd, closer, err := Descriptor.NewSender(s, channels.Env{SendTimeout: 5 * time.Second})
				if err != nil {
					t.Fatalf("NewSender: %v", err)
				}
				t.Cleanup(func() { _ = closer() })
				if _, err := snd.Send(t.Context(), m); err != nil {
					t.Fatalf("Send: %v", err)
				}
				got := srv.Messages()
				if len(got) != 1 {
					t.Fatalf("relay has %d messages, want 1", len(got))
				}
				if _, err := dkimVerify(t, got[0].Raw, k.record); err != nil {
					t.Fatalf("the message the relay received does not verify: %v\n%s", err, got[0].Raw)
				}
			})
		})
	}
}

func TestDKIMOff(t *testing.T) {
	t.Parallel()
	d, err := newDKIM(DKIMSettings{Headers: defaultDKIMHeaders()}, dkimTestFrom)
	if d != nil || err != nil {
		t.Fatalf("newDKIM without a key = %v, %v; want nil, nil", d, err)
	}
	raw := dkimTestCompose(t, nil, dkimTestMessage(t))
	if bytes.Contains(raw, []byte("DKIM-Signature")) {
		t.Fatal("a message is signed without a key")
	}
}

func TestDKIMValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	key := dkimTestKeys(t)[0].path
	cases := []struct {
		name   string
		change func(*Settings)
		key    string // "" when valid
	}{
		{"defaults", func(*Settings) {}, ""},
		{"signing", func(s *Settings) { s.DKIM.KeyFile, s.DKIM.Selector = key, "herald" }, ""},
		{"signing, own domain and headers", func(s *Settings) {
			s.DKIM = DKIMSettings{KeyFile: key, Selector: "mail.2026", Domain: "Mail.Example.org", Headers: []string{"Subject"}}
		}, ""},
		{"no selector", func(s *Settings) { s.DKIM.KeyFile = key }, "dkim.selector"},
		{"selector not a label", func(s *Settings) { s.DKIM.KeyFile, s.DKIM.Selector = key, "her ald" }, "dkim.selector"},
		{"selector without key", func(s *Settings) { s.DKIM.Selector = "herald" }, "dkim.keyFile"},
		{"domain without key", func(s *Settings) { s.DKIM.Domain = "example.com" }, "dkim.keyFile"},
		{"domain not a name", func(s *Settings) { s.DKIM.KeyFile, s.DKIM.Selector, s.DKIM.Domain = key, "herald", "exa mple.com" }, "dkim.domain"},
		{"from domain not public", func(s *Settings) {
			s.From, s.DKIM.KeyFile, s.DKIM.Selector = "herald@localhost", key, "herald"
		}, "dkim.domain"},
		{"header not a name", func(s *Settings) { s.DKIM.Headers = []string{"From", "Sub ject"} }, "dkim.headers[1]"},
		{"signature signs itself", func(s *Settings) { s.DKIM.Headers = []string{"dkim-signature"} }, "dkim.headers[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.From = dkimTestFrom
			tc.change(s)
			err := s.Validate()
			if tc.key == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate passed, want an error naming %s", tc.key)
			}
			lines := strings.Split(err.Error(), "\n")
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, tc.key+": ") }) {
				t.Fatalf("err = %v, want a line starting %q", err, tc.key+": ")
			}
		})
	}
}

// TestDKIMNewSenderRefusesBadKeys is not parallel: it sets GODEBUG, for the
// whole process, to make a short RSA key.
func TestDKIMNewSenderRefusesBadKeys(t *testing.T) {
	dir := t.TempDir()
	const canary = "Q0FOQVJZLWtleS1tYXRlcmlhbC1uZXZlci1wcmludGVk"
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GODEBUG", "rsa1024min=0") // Go refuses to make such a key otherwise, and to sign with it
	small, err := rsa.GenerateKey(rand.Reader, 768)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	block := func(typ string, der []byte, h map[string]string) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: typ, Headers: h, Bytes: der})
	}
	cases := []struct {
		name, content, want string
	}{
		{"not PEM", "secret: " + canary + "\n", "no PEM block"},
		{"PKCS#1 block of garbage", string(block("RSA PRIVATE KEY", []byte(canary+canary), nil)), "does not parse"},
		{"PKCS#8 block of garbage", string(block("PRIVATE KEY", []byte(canary+canary), nil)), "does not parse"},
		{"ECDSA key", string(block("PRIVATE KEY", dkimTestPKCS8(t, ec), nil)), "RSA or Ed25519"},
		{"SEC 1 key", string(block("EC PRIVATE KEY", []byte(canary), nil)), `"EC PRIVATE KEY"`},
		{"public key", string(block("PUBLIC KEY", pub, nil)), `"PUBLIC KEY"`},
		{"encrypted", string(block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk),
			map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-256-CBC,00"})), "encrypted"},
		{"short RSA key", string(block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(small), nil)), "768 bits"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, string(rune('a'+i))+".pem")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, host := range []string{"", "127.0.0.1"} { // the Outbox and the Sender
				s := DefaultSettings()
				s.Host, s.From, s.DKIM.KeyFile, s.DKIM.Selector = host, dkimTestFrom, path, "herald"
				if err := s.Validate(); err != nil {
					t.Fatalf("Validate reads the key: %v", err)
				}
				snd, closer, err := Descriptor.NewSender(s, channels.Env{Data: dir})
				if err == nil {
					if closer != nil {
						_ = closer()
					}
					t.Fatalf("NewSender accepted the key file and gave a %T", snd)
				}
				msg := err.Error()
				t.Log(msg)
				if !strings.HasPrefix(msg, "smtp.dkim.keyFile: "+path+": ") || !strings.Contains(msg, tc.want) {
					t.Errorf("err = %q, want smtp.dkim.keyFile, the path and %q", msg, tc.want)
				}
				for line := range strings.Lines(tc.content) {
					line = strings.TrimSpace(line)
					if len(line) >= 16 && !strings.HasPrefix(line, "-----") && strings.Contains(msg, line) {
						t.Errorf("err quotes the key file (%q): %s", line, msg)
					}
				}
				if strings.Contains(msg, canary) {
					t.Errorf("err quotes the key file: %s", msg)
				}
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		s := DefaultSettings()
		s.From, s.DKIM.KeyFile, s.DKIM.Selector = dkimTestFrom, filepath.Join(dir, "missing.pem"), "herald"
		_, _, err := Descriptor.NewSender(s, channels.Env{Data: dir})
		if err == nil || !strings.HasPrefix(err.Error(), "smtp.dkim.keyFile: ") || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want smtp.dkim.keyFile and not-exist", err)
		}
	})
	t.Run("no selector", func(t *testing.T) {
		s := DefaultSettings()
		s.From, s.DKIM.KeyFile = dkimTestFrom, filepath.Join(dir, "a.pem")
		_, _, err := Descriptor.NewSender(s, channels.Env{Data: dir})
		if err == nil || !strings.HasPrefix(err.Error(), "smtp.dkim.selector: ") {
			t.Fatalf("err = %v, want one naming smtp.dkim.selector", err)
		}
	})
}

// TestDKIMSignsEveryShape signs the other shapes compose makes: one body
// part, HTML only, an empty body, attachments without HTML.
func TestDKIMSignsEveryShape(t *testing.T) {
	t.Parallel()
	k := dkimTestKeys(t)[2]
	d := dkimTestSigner(t, DKIMSettings{Selector: dkimTestSelector, KeyFile: k.path})
	shapes := []struct {
		name   string
		change func(*channels.Message)
	}{
		{"text only", func(m *channels.Message) { m.HTML, m.Attachments = "", nil }},
		{"html only", func(m *channels.Message) { m.Text, m.Attachments = "", nil }},
		{"empty body", func(m *channels.Message) { m.Text, m.HTML, m.Attachments = "", "", nil }},
		{"text and attachments", func(m *channels.Message) { m.HTML = "" }},
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			m := dkimTestMessage(t)
			s.change(&m)
			raw := dkimTestCompose(t, d, m)
			if _, err := dkimVerify(t, raw, k.record); err != nil {
				t.Fatalf("signature does not verify: %v\n%s", err, raw)
			}
		})
	}
}
