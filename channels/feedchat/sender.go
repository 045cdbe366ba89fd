package feedchat

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
)

// Defaults for Config.
const (
	DefaultLoginURL   = "https://login.salesforce.com"
	DefaultAPIVersion = "59.0"
	DefaultTimeout    = 30 * time.Second
)

// maxText is the longest text of a Chatter feed item, in characters.
const maxText = 10000

// maxBody bounds how much of a response is read.
const maxBody = 1 << 20

// Config configures a Sender.
type Config struct {
	LoginURL     string // OAuth server; empty means DefaultLoginURL
	ClientID     string // connected app consumer key
	ClientSecret string // connected app consumer secret
	APIVersion   string // REST API version such as "59.0"; empty means DefaultAPIVersion
	Timeout      time.Duration
	// Clock is the clock for token expiry; nil means the real clock.
	Clock clock.Clock
	// Conns is how many connections to each server the default client keeps
	// open: the sends run at once; at least 2.
	Conns int
}

// Sender posts feed items. Access tokens are cached per user name and
// password until the server refuses one (or its expires_in runs out). It is
// safe for concurrent use.
type Sender struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
	salt   [32]byte
	logins singleflight.Group

	mu     sync.Mutex
	tokens map[string]cached // by user name
}

var _ channels.Sender = (*Sender)(nil)

// New returns a Sender; a nil httpClient means a default client.
func New(cfg Config, httpClient *http.Client) *Sender {
	if cfg.LoginURL == "" {
		cfg.LoginURL = DefaultLoginURL
	}
	cfg.APIVersion = strings.TrimPrefix(cfg.APIVersion, "v")
	if cfg.APIVersion == "" {
		cfg.APIVersion = DefaultAPIVersion
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if httpClient == nil {
		httpClient = &http.Client{Transport: channels.Transport(cfg.Conns)}
	}
	s := &Sender{cfg: cfg, client: httpClient, now: clock.Or(cfg.Clock).Now, tokens: make(map[string]cached)}
	_, _ = rand.Read(s.salt[:])
	return s
}

// Kind is the feed chat kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Text is what a message posts: the subject on the first line and the text
// below it, or either alone, cut with an ellipsis to leave room within
// Chatter's 10,000 characters for a line per attachment with its download
// link, when the message has them. HTML and the files themselves are not posted.
func Text(subject, text string, links channels.Links) string {
	subject, text = strings.TrimSpace(subject), strings.TrimSpace(text)
	body := subject + "\n" + text
	switch {
	case subject == "":
		body = text
	case text == "":
		body = subject
	}
	var tail strings.Builder
	for _, f := range links.Files {
		fmt.Fprintf(&tail, "\n%s: %s", f.Name, f.URL)
	}
	room := maxText - utf8.RuneCountInString(tail.String())
	if room < maxText/2 {
		room = maxText / 2 // links beyond that are cut with the rest
	}
	body = cut(strings.ToValidUTF8(body, "\uFFFD"), room)
	if tail.Len() > 0 {
		body = strings.TrimSpace(body + tail.String())
	}
	return cut(body, maxText)
}

// cut ends s with an ellipsis when it has more than n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}

// errUnauthorized is a feed request refused for its token.
var errUnauthorized = errors.New("access token refused")

// Send posts the message as the channel's user and returns the feed
// element id. A refused token is replaced once; refused again, the
// credentials are taken as bad and the error is permanent.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("post to feed: %w", err)
	}
	text := Text(m.Subject, m.Text, m.Links)
	if text == "" {
		return "", channels.Permanent(errors.New("post to feed: empty message"))
	}
	var a Account
	if err := m.Channel.Decode(&a); err != nil {
		return "", err
	}
	creds := credentials{Username: a.Username, Password: m.Channel.Secret}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	stale := ""
	for attempt := 0; ; attempt++ {
		tok, err := s.accessToken(ctx, creds, stale)
		if err != nil {
			return "", fmt.Errorf("post to feed: log in: %w", err)
		}
		id, err := s.post(ctx, tok, text, m.DeliveryID)
		switch {
		case errors.Is(err, errUnauthorized) && attempt == 0:
			stale = tok.access
			continue
		case errors.Is(err, errUnauthorized):
			return "", channels.Permanent(fmt.Errorf("post to feed: a fresh token was refused too: %w", err))
		case err != nil:
			return "", fmt.Errorf("post to feed: %w", err)
		}
		return id, nil
	}
}

type feedItem struct {
	Body struct {
		MessageSegments []segment `json:"messageSegments"`
	} `json:"body"`
	FeedElementType string `json:"feedElementType"`
	SubjectID       string `json:"subjectId"`
}

type segment struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type apiError struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// Chatter error codes that may pass later, whatever the status says.
var transientAPIErrors = map[string]bool{
	"REQUEST_LIMIT_EXCEEDED": true, // sent with 403
	"SERVER_UNAVAILABLE":     true,
	"UNABLE_TO_LOCK_ROW":     true,
}

// post creates a text feed item on the user's own feed.
func (s *Sender) post(ctx context.Context, tok token, text, deliveryID string) (string, error) {
	var item feedItem
	item.Body.MessageSegments = []segment{{Type: "Text", Text: text}}
	item.FeedElementType, item.SubjectID = "FeedItem", "me"
	payload, err := json.Marshal(item)
	if err != nil {
		return "", channels.Permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		tok.instance+"/services/data/v"+s.cfg.APIVersion+"/chatter/feed-elements", bytes.NewReader(payload))
	if err != nil {
		return "", channels.Permanent(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.access)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if deliveryID != "" {
		req.Header.Set("Idempotency-Key", deliveryID)
	}
	status, body, err := s.do(req)
	switch {
	case err != nil:
		return "", err
	case status == http.StatusUnauthorized:
		return "", errUnauthorized
	case status < 200 || status > 299:
		var errs []apiError
		_ = json.Unmarshal(body, &errs)
		var ae apiError
		if len(errs) > 0 {
			ae = errs[0]
		}
		err := fmt.Errorf("status %d: %s", status, describe(ae.ErrorCode, ae.Message, body))
		if transientAPIErrors[ae.ErrorCode] || retryableStatus(status) {
			return "", err
		}
		return "", channels.Permanent(err)
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &created); err != nil || created.ID == "" {
		// Posted, so a retry could post it twice.
		return "", channels.Permanent(fmt.Errorf("status %d without a feed element id", status))
	}
	return created.ID, nil
}

// do sends req and reads at most maxBody of the response.
func (s *Sender) do(req *http.Request) (int, []byte, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, body, nil
}

func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// describe renders an error answer: its code and message when it had them,
// else the start of the body.
func describe(code, message string, body []byte) string {
	if code != "" || message != "" {
		return strings.TrimSpace(code + ": " + message)
	}
	const limit = 200
	if len(body) > limit {
		body = body[:limit]
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(body)), "?")
}
