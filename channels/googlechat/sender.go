package googlechat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/egress"
)

// DefaultTimeout bounds one send when channels.Env.SendTimeout is zero.
const DefaultTimeout = 30 * time.Second

// ReplyOption is the messageReplyOption a message of a thread is sent
// with: without one, Google Chat ignores the thread key.
const ReplyOption = "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"

const (
	userAgent     = "Herald-GoogleChat/1"
	maxProviderID = 200
)

// Sender posts messages to Google Chat spaces through their incoming
// webhooks. It is safe for concurrent use.
type Sender struct {
	base      *url.URL
	timeout   time.Duration
	now       func() time.Time
	log       *slog.Logger
	transport *http.Transport
}

var _ channels.Sender = (*Sender)(nil)

// New returns a Sender over the googleChat section's settings.
func New(set *Settings, env channels.Env) (*Sender, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("googleChat: %w", err)
	}
	env = env.Defaults(DefaultTimeout)
	base, _ := parseBase(set.BaseURL)
	s := &Sender{base: base, timeout: env.SendTimeout, now: env.Clock.Now, log: env.Logger, transport: channels.Transport(set.Concurrency)}
	return s, nil
}

// Close closes the sender's idle connections.
func (s *Sender) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}

// Kind is the Google Chat kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Destination names the space a channel's messages go to: its URL's host
// and a digest of its path, never the query that holds the key and token.
func (s *Sender) Destination(c channels.Channel) string {
	u, err := url.Parse(strings.TrimSpace(c.Secret))
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Host) + " " + channels.Digest(u.Path)
}

// ThreadKey is the thread of a subscription's messages in a space: a
// digest of its URI, so that they share one thread. A message no
// subscription made has none.
func ThreadKey(src channels.Source) string {
	if src.Subscription == "" {
		return ""
	}
	return "herald-" + channels.Digest(src.Subscription)
}

// requestID is the request id of a delivery: a retry repeats it, and Google
// Chat answers it with the message the first request made.
func requestID(delivery string) string {
	sum := sha256.Sum256([]byte("herald delivery " + delivery))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Send posts the message to the channel's space, in its subscription's
// thread, and returns the message's name.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("googlechat: %w", err)
	}
	if m.Channel.Secret == "" {
		return "", channels.Permanent(fmt.Errorf("googlechat: channel %s has no webhook URL", m.Channel.ID))
	}
	u, err := checkURL(s.base, m.Channel.Secret)
	if err != nil {
		return "", channels.Permanent(fmt.Errorf("googlechat: channel %s: %w", m.Channel.ID, err))
	}
	thread := ThreadKey(m.Source)
	body, err := Message(m, thread)
	if err != nil {
		return "", err
	}
	target := s.target(u, thread, m.DeliveryID)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return "", channels.Permanent(fmt.Errorf("googlechat: the URL of channel %s does not make a request", m.Channel.ID))
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	req.Header.Set("User-Agent", userAgent)
	a, err := egress.Post(s.transport, req) // its errors do not quote the URL, whose query holds the key and token
	if err != nil {
		err = fmt.Errorf("googlechat: post to %s: %w", target.Host, err)
		s.log.Info("google chat not reached", "delivery", m.DeliveryID, "channel", m.Channel.ID, "err", err)
		return "", err
	}
	return s.outcome(m, u, a)
}

// target is where a message to webhook u goes: the base URL's scheme and
// host, its path before u's path, u's query with the reply option (when
// the message has a thread) and the delivery's request id.
func (s *Sender) target(u *url.URL, thread, delivery string) *url.URL {
	q := u.Query()
	if thread != "" {
		q.Set("messageReplyOption", ReplyOption)
	}
	q.Set("requestId", requestID(delivery))
	return &url.URL{Scheme: s.base.Scheme, Host: s.base.Host, Path: strings.TrimSuffix(s.base.Path, "/") + u.Path,
		RawQuery: q.Encode()}
}

// outcome reads Google Chat's answer: a 200 posted the message, named in
// its body; otherwise an error that says the status and Google's status code
// (INVALID_ARGUMENT), never the message; the log gets its start.
func (s *Sender) outcome(m channels.Message, u *url.URL, a egress.Answer) (string, error) {
	if a.OK() {
		var msg struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(a.Body, &msg) == nil && msg.Name != "" {
			return egress.Cut(msg.Name, maxProviderID), nil
		}
		return fmt.Sprintf("%d %s", a.Status, m.DeliveryID), nil
	}
	var answer struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.Body, &answer)
	err := fmt.Errorf("googlechat: %s answered %d %s", u.Host, a.Status, http.StatusText(a.Status))
	if code := answer.Error.Status; code != "" && strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" && len(code) <= 40 {
		err = fmt.Errorf("%w (%s)", err, code)
	}
	var secrets []string
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	s.log.Info("google chat refused", "delivery", m.DeliveryID, "channel", m.Channel.ID, "status", a.Status,
		"body", a.Excerpt(secrets...))
	return "", a.Refusal(err, s.now())
}
