package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/egress"
)

// DefaultTimeout bounds one send when channels.Env.SendTimeout is zero.
const DefaultTimeout = 30 * time.Second

const (
	userAgent     = "Herald-Webhook/1"
	maxProviderID = 200 // longest X-Request-Id returned as it is
	omittedNote   = "larger than webhook.maxInlineBytes"
)

// Payload is the JSON body of a webhook request.
type Payload struct {
	DeliveryID        string              `json:"deliveryId"`
	Subscription      string              `json:"subscription"` // URI; empty for a message no run made
	SubscriptionTitle string              `json:"subscriptionTitle"`
	Run               string              `json:"run"`
	Instant           time.Time           `json:"instant,omitzero"` // RFC 3339
	Manual            bool                `json:"manual"`
	Resolved          bool                `json:"resolved"`
	Subject           string              `json:"subject"`
	Text              string              `json:"text"`
	Values            map[string]*float64 `json:"values"` // metric URI → value; null: no value
	Attachments       []Attachment        `json:"attachments"`
}

// Attachment is a file of a Payload: inline as base64 in Content, or, when
// it would take the message's inline attachments past
// webhook.maxInlineBytes, listed with Omitted and no Content. URL downloads
// it without a login until the link expires, when the service has a public URL.
type Attachment struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	Content     []byte `json:"content,omitzero"`
	Omitted     string `json:"omitted,omitempty"`
	URL         string `json:"url,omitempty"`
}

// Sender posts messages to webhook endpoints, refusing internal addresses
// at connect time as well as in the configuration. It is safe for
// concurrent use.
type Sender struct {
	guard     *egress.Guard
	maxInline int64
	maxFiles  int64 // webhook.maxAttachmentBytes
	timeout   time.Duration
	now       func() time.Time
	log       *slog.Logger
	templates templates
	secure    *http.Transport // for https endpoints
	plain     *http.Transport // for http endpoints, in allowed networks only
}

var _ channels.Sender = (*Sender)(nil)

// New returns a Sender over the webhook section's settings.
func New(set *Settings, env channels.Env) (*Sender, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	env = env.Defaults(DefaultTimeout)
	s := &Sender{
		guard:     egress.New(set.Egress()),
		maxInline: set.MaxInlineBytes,
		maxFiles:  set.MaxAttachmentBytes,
		timeout:   env.SendTimeout,
		now:       env.Clock.Now,
		log:       env.Logger,
	}
	s.guard.Warm()
	s.secure = s.guard.Transport(false, set.Concurrency)
	s.plain = s.guard.Transport(true, set.Concurrency)
	if set.CAFile != "" {
		roots, err := loadCAs(set.CAFile)
		if err != nil {
			return nil, fmt.Errorf("webhook: caFile: %w", err)
		}
		s.secure.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return s, nil
}

// loadCAs returns the system's certificate pool with the PEM file's
// authorities added.
func loadCAs(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return roots, nil
}

// Close closes the sender's idle connections.
func (s *Sender) Close() error {
	s.secure.CloseIdleConnections()
	s.plain.CloseIdleConnections()
	return nil
}

// Kind is the webhook kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Destination names the receiver a channel's messages go to by its URL's
// origin (scheme, host and port), without the path and query, which may hold
// a token.
func (s *Sender) Destination(c channels.Channel) string {
	var e Endpoint
	if c.Decode(&e) != nil {
		return ""
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Send posts the message to the channel's URL, signed with the channel's
// secret, and returns the response's X-Request-Id or, without one, the
// status and the delivery id.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("webhook: %w", err)
	}
	var e Endpoint
	if err := m.Channel.Decode(&e); err != nil {
		return "", err
	}
	u, err := s.guard.CheckURL(e.URL)
	if err != nil {
		return "", channels.Permanent(fmt.Errorf("webhook: channel %s: %w", m.Channel.ID, err))
	}
	if m.Channel.Secret == "" {
		return "", channels.Permanent(fmt.Errorf("webhook: channel %s has no secret to sign with", m.Channel.ID))
	}
	inline, err := s.fit(&m)
	if err != nil {
		return "", err
	}
	var body []byte
	if e.Template != "" {
		body, err = s.templated(m, e.Template)
	} else {
		body, err = s.body(m, inline)
	}
	if err != nil {
		return "", err
	}
	ts := s.now().Unix()
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		// Not quoted: the URL's path or query may hold a token.
		return "", channels.Permanent(fmt.Errorf("webhook: the URL of channel %s does not make a request", m.Channel.ID))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Idempotency-Key", m.DeliveryID)
	req.Header.Set(HeaderDelivery, m.DeliveryID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(m.Channel.Secret, ts, body))
	t := s.secure
	if u.Scheme == "http" {
		t = s.plain
	}
	a, err := egress.Post(t, req)
	if err != nil {
		if !channels.IsPermanent(err) { // else the guard refused the address, and says so
			err = fmt.Errorf("webhook: post to %s: %w", u.Host, err)
		}
		s.log.Info("webhook receiver not reached", "delivery", m.DeliveryID, "channel", m.Channel.ID, "err", err)
		return "", channels.Unreachable(err)
	}
	return s.outcome(m, u.Host, a)
}

// outcome reads the receiver's answer: the provider id of a 2xx, or an
// error that says the status and never the body, which is the receiver's
// to say and may be anything. The log gets the start of the body.
func (s *Sender) outcome(m channels.Message, host string, a egress.Answer) (string, error) {
	if a.OK() {
		if id := a.Header.Get("X-Request-Id"); id != "" {
			return egress.Cut(id, maxProviderID), nil
		}
		return fmt.Sprintf("%d %s", a.Status, m.DeliveryID), nil
	}
	err := fmt.Errorf("webhook: %s answered %d %s", host, a.Status, http.StatusText(a.Status))
	s.log.Info("webhook receiver refused", "delivery", m.DeliveryID, "channel", m.Channel.ID, "host", host,
		"status", a.Status, "body", a.Excerpt(m.Channel.Secret))
	return "", a.Refusal(err, s.now())
}

// fit applies webhook.maxAttachmentBytes to m: files beyond it in total are
// listed with their links and none inline, and the text says so in one
// line. It returns the budget of the files put inline.
func (s *Sender) fit(m *channels.Message) (int64, error) {
	size, files := channels.FilesSize(*m), m.Files()
	if s.maxFiles <= 0 || size <= s.maxFiles || len(files) == 0 {
		return s.maxInline, nil
	}
	if len(m.Links.Files) < len(files) {
		return 0, channels.Permanent(fmt.Errorf("webhook: the attachments are larger than webhook.maxAttachmentBytes, and %w",
			channels.ErrNoLinks))
	}
	m.Text = channels.OversizeLine(size, s.maxFiles, m.Links.Files[0].Expires) + "\n\n" + m.Text
	return 0, nil
}

// body is the JSON of the message's Payload, with files inline up to
// budget bytes in total.
func (s *Sender) body(m channels.Message, budget int64) ([]byte, error) {
	src := m.Source
	p := Payload{
		DeliveryID:        m.DeliveryID,
		Subscription:      src.Subscription,
		SubscriptionTitle: src.SubscriptionTitle,
		Run:               src.Run,
		Instant:           src.Instant,
		Manual:            src.Manual,
		Resolved:          src.Resolved,
		Subject:           m.Subject,
		Text:              m.Text,
		Values:            make(map[string]*float64, len(src.Values)),
		Attachments:       make([]Attachment, 0, len(m.Attachments)),
	}
	for uri, v := range src.Values {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			v = nil // JSON has no NaN or infinity
		}
		p.Values[uri] = v
	}
	for i, a := range m.Files() {
		att, err := s.attachment(a, &budget)
		if err != nil {
			return nil, err
		}
		if i < len(m.Links.Files) {
			att.URL = m.Links.Files[i].URL
		}
		if att.Omitted != "" {
			s.log.Info("webhook attachment listed without its content", "delivery", m.DeliveryID,
				"attachment", att.Name, "size", att.Size, "maxInlineBytes", s.maxInline)
		}
		p.Attachments = append(p.Attachments, att)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, channels.Permanent(fmt.Errorf("webhook: encode the body: %w", err))
	}
	return b, nil
}

// attachment reads a file inline when it fits in what is left of the
// budget, and takes its size off the budget; a file that does not fit is
// not read. A missing file is a permanent error, any other failure to read
// it may pass.
func (s *Sender) attachment(a channels.Attachment, budget *int64) (Attachment, error) {
	out := Attachment{Name: a.Name, ContentType: a.ContentType}
	if out.Name == "" {
		out.Name = filepath.Base(a.Path)
	}
	if out.ContentType == "" {
		out.ContentType = mime.TypeByExtension(filepath.Ext(out.Name))
		if out.ContentType == "" {
			out.ContentType = "application/octet-stream"
		}
	}
	fail := func(err error) (Attachment, error) {
		err = fmt.Errorf("webhook: attachment %q: %w", out.Name, err)
		if errors.Is(err, fs.ErrNotExist) {
			return Attachment{}, channels.Permanent(err)
		}
		return Attachment{}, err
	}
	// Stat before opening: opening a named pipe would block.
	if info, err := os.Stat(a.Path); err != nil {
		return fail(err)
	} else if !info.Mode().IsRegular() {
		return Attachment{}, channels.Permanent(fmt.Errorf("webhook: attachment %q: %s is not a regular file", out.Name, a.Path))
	}
	f, err := os.Open(a.Path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	out.Size = info.Size()
	if out.Size > *budget {
		out.Omitted = omittedNote
		return out, nil
	}
	out.Content = make([]byte, out.Size)
	if _, err := io.ReadFull(f, out.Content); err != nil {
		return fail(err)
	}
	*budget -= out.Size
	return out, nil
}
