package teams

import (
	"bytes"
	"context"
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

const (
	userAgent     = "Herald-Teams/1"
	maxProviderID = 200
)

// Sender posts Adaptive Cards to Teams workflows, refusing internal
// addresses at connect time as well as in the configuration. It is safe for
// concurrent use.
type Sender struct {
	guard   *egress.Guard
	timeout time.Duration
	now     func() time.Time
	log     *slog.Logger
	secure  *http.Transport // for https URLs
	plain   *http.Transport // for http URLs, in allowed networks only
}

var _ channels.Sender = (*Sender)(nil)

// New returns a Sender over the teams section's settings.
func New(set *Settings, env channels.Env) (*Sender, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("teams: %w", err)
	}
	env = env.Defaults(DefaultTimeout)
	s := &Sender{guard: set.guard(), timeout: env.SendTimeout, now: env.Clock.Now, log: env.Logger}
	s.guard.Warm()
	s.secure = s.guard.Transport(false, set.Concurrency)
	s.plain = s.guard.Transport(true, set.Concurrency)
	return s, nil
}

// Close closes the sender's idle connections.
func (s *Sender) Close() error {
	s.secure.CloseIdleConnections()
	s.plain.CloseIdleConnections()
	return nil
}

// Kind is the Teams kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Destination names the workflow a channel's messages go to: its URL's host
// and a digest of its path, never the query that holds its signature.
func (s *Sender) Destination(c channels.Channel) string { return destination(c.Secret) }

// Send posts the message's card to the channel's workflow and returns the
// workflow run's id, or, without one, the status and the delivery id. Teams
// does not recognise a repeated delivery: a retry after an answer that was
// lost may post the card twice.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("teams: %w", err)
	}
	if m.Channel.Secret == "" {
		return "", channels.Permanent(fmt.Errorf("teams: channel %s has no workflow URL", m.Channel.ID))
	}
	u, err := s.guard.CheckURL(strings.TrimSpace(m.Channel.Secret))
	if err != nil {
		return "", channels.Permanent(fmt.Errorf("teams: channel %s: %w", m.Channel.ID, err))
	}
	body, err := Body(m)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		// Not quoted: the URL holds the workflow's signature.
		return "", channels.Permanent(fmt.Errorf("teams: the URL of channel %s does not make a request", m.Channel.ID))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Idempotency-Key", m.DeliveryID)
	t := s.secure
	if u.Scheme == "http" {
		t = s.plain
	}
	a, err := egress.Post(t, req)
	if err != nil {
		if !channels.IsPermanent(err) { // else the guard refused the address, and says so
			err = fmt.Errorf("teams: post to %s: %w", u.Host, err)
		}
		s.log.Info("teams workflow not reached", "delivery", m.DeliveryID, "channel", m.Channel.ID, "err", err)
		return "", channels.Unreachable(err)
	}
	return s.outcome(m, u, a)
}

// outcome reads the workflow's answer: 200 or 202 (or another 2xx) posted
// the card, named by the workflow run's id; otherwise an error that says the
// status, never the body; the log gets its start.
func (s *Sender) outcome(m channels.Message, u *url.URL, a egress.Answer) (string, error) {
	if a.OK() {
		for _, h := range []string{"x-ms-workflow-run-id", "x-ms-request-id"} {
			if id := a.Header.Get(h); id != "" {
				return egress.Cut(id, maxProviderID), nil
			}
		}
		return fmt.Sprintf("%d %s", a.Status, m.DeliveryID), nil
	}
	err := fmt.Errorf("teams: %s answered %d %s", u.Host, a.Status, http.StatusText(a.Status))
	s.log.Info("teams workflow refused", "delivery", m.DeliveryID, "channel", m.Channel.ID, "host", u.Host,
		"status", a.Status, "body", a.Excerpt(secrets(u)...))
	return "", a.Refusal(err, s.now())
}

// secrets are the parts of a workflow's URL an answer must not echo into the
// log: the URL, its path and its query, which holds the signature.
func secrets(u *url.URL) []string {
	out := []string{u.String(), u.RawQuery}
	if len(u.Path) > 1 {
		out = append(out, u.EscapedPath(), u.Path)
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}
