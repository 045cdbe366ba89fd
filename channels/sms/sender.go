package sms

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	twilio "github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/heraldhq/herald/channels"
)

// Defaults for Config.
const (
	DefaultBaseURL     = "https://api.twilio.com"
	DefaultMaxSegments = 3
	DefaultTimeout     = 10 * time.Second
)

// Config configures a Sender.
type Config struct {
	BaseURL     string // API base; empty means DefaultBaseURL
	MaxSegments int    // longest message in SMS segments; 0 means DefaultMaxSegments
	Timeout     time.Duration
	Conns       int // connections kept open to the API: the sends run at once; at least 2
}

// Sender sends text messages through the Messages API. The account SID and
// auth token come from each channel, so one Sender serves every account. It
// is safe for concurrent use.
type Sender struct {
	base        *url.URL
	maxSegments int
	timeout     time.Duration
	transport   http.RoundTripper
}

var _ channels.Sender = (*Sender)(nil)

// New returns a Sender. A BaseURL that does not parse as an absolute URL
// makes every Send fail permanently.
func New(cfg Config) *Sender {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		base = nil
	}
	if cfg.MaxSegments <= 0 {
		cfg.MaxSegments = DefaultMaxSegments
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Sender{base: base, maxSegments: cfg.MaxSegments, timeout: cfg.Timeout,
		transport: channels.Transport(cfg.Conns)}
}

// Kind is the SMS kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Body is the text sent for a subject and text: the subject on the first
// line and the text below it, or either alone when the other is empty.
func Body(subject, text string) string {
	subject, text = strings.TrimSpace(subject), strings.TrimSpace(text)
	switch {
	case subject == "":
		return text
	case text == "":
		return subject
	}
	return subject + "\n" + text
}

// Links is what an SMS adds for its attachments: a download link each, on
// lines of their own.
func Links(l channels.Links) string {
	var b strings.Builder
	for _, f := range l.Files {
		b.WriteString("\n" + f.URL)
	}
	return b.String()
}

// Send sends Body(m.Subject, m.Text), trimmed to the configured number of
// segments, then a download link per attachment (when the message has them;
// the text is cut to keep them), from the channel's number to its recipient and returns the message SID.
// The delivery id travels as the Idempotency-Key header; Twilio itself does
// not deduplicate on it, so the caller's ledger stays the guard against
// double sends.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("send sms: %w", err)
	}
	if s.base == nil {
		return "", channels.Permanent(errors.New("send sms: the API base URL is not an absolute URL"))
	}
	var num Numbers
	if err := m.Channel.Decode(&num); err != nil {
		return "", err
	}
	body := TrimBefore(strings.ToValidUTF8(Body(m.Subject, m.Text), "\uFFFD"), Links(m.Links), s.maxSegments)
	if body == "" {
		return "", channels.Permanent(errors.New("send sms: empty message"))
	}
	// The timeout is the context's rather than http.Client's: twilio-go leaves
	// error bodies open, and a client timeout would keep a goroutine per
	// error response until it fired.
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var status int // of the last response, 0 when none arrived
	client := &twilio.Client{
		Credentials: twilio.NewCredentials(num.Username, m.Channel.Secret),
		HTTPClient: &http.Client{
			Transport:     s.roundTrip(ctx, m.DeliveryID, &status),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	client.SetAccountSid(num.Username)
	api := openapi.NewApiService(&twilio.RequestHandler{Client: rebased{Client: client, base: s.base}})
	params := &openapi.CreateMessageParams{}
	params.SetTo(num.To).SetFrom(num.From).SetBody(body)
	msg, err := api.CreateMessage(params)
	if err != nil {
		return "", fmt.Errorf("send sms: %w", classify(err, status))
	}
	if msg.Sid == nil || *msg.Sid == "" {
		// Accepted, so a retry could send it twice.
		return "", channels.Permanent(errors.New("send sms: accepted without a message SID"))
	}
	return *msg.Sid, nil
}

// roundTrip adapts the shared transport to one send: twilio-go builds its
// requests without a context, so the send's context is put on them; the
// delivery id goes in the Idempotency-Key header; the status is recorded,
// and error bodies are read in full so that their connection is reused
// (twilio-go does not close them).
func (s *Sender) roundTrip(ctx context.Context, deliveryID string, status *int) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(ctx)
		if deliveryID != "" {
			req.Header.Set("Idempotency-Key", deliveryID)
		}
		resp, err := s.transport.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		*status = resp.StatusCode
		if resp.StatusCode >= http.StatusBadRequest {
			b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			if err != nil {
				return nil, err
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// rebased sends twilio-go's requests, which always name api.twilio.com, to
// the configured base URL instead.
type rebased struct {
	*twilio.Client
	base *url.URL
}

func (r rebased) SendRequest(method, rawURL string, data url.Values, headers map[string]any, body ...byte) (*http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	u.Scheme, u.Host = r.base.Scheme, r.base.Host
	u.Path = strings.TrimSuffix(r.base.Path, "/") + u.Path
	return r.Client.SendRequest(method, u.String(), data, headers, body...)
}

// Twilio error codes whose meaning decides over the HTTP status.
var (
	transientCodes = map[int]bool{
		14107: true, // SMS send rate limit exceeded
		20429: true, // too many requests
		20500: true, // internal server error
		20503: true, // service unavailable
		21611: true, // the From number has too many queued messages
	}
	permanentCodes = map[int]bool{
		20003: true, // authentication failed
		20404: true, // resource not found (unknown account)
		21211: true, // invalid To number
		21212: true, // invalid From number
		21214: true, // To number cannot be reached
		21408: true, // no permission to send to the region
		21602: true, // body required
		21606: true, // From number cannot send SMS
		21608: true, // unverified number on a trial account
		21610: true, // recipient unsubscribed (STOP)
		21612: true, // cannot route to the To number
		21614: true, // To number is not a mobile number
		21617: true, // body too long
		21222: true, // account SID has illegal characters
		21224: true, // auth token has illegal characters
	}
)

// classify decides whether a failed create may pass later: Twilio's error
// code first, then the HTTP status (429, 408 and 5xx may pass; other 4xx
// will not); errors with no response at all (network, context) may pass.
func classify(err error, status int) error {
	var re *twilio.TwilioRestError
	code := 0
	if errors.As(err, &re) {
		code = re.Code
		if re.Status != 0 {
			status = re.Status
		}
	}
	switch {
	case transientCodes[code]:
		return err
	case permanentCodes[code]:
		return channels.Permanent(err)
	case status == 0:
		return err
	case status == http.StatusTooManyRequests, status == http.StatusRequestTimeout, status >= 500:
		return err
	case status >= 400:
		return channels.Permanent(err)
	case status >= 200 && status < 300:
		// Accepted, so a retry could send it twice.
		return channels.Permanent(fmt.Errorf("accepted, but the response is unreadable: %w", err))
	}
	return err
}
