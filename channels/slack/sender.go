package slack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/heraldhq/herald/channels"
)

// Defaults for Config.
const (
	DefaultBaseURL      = slack.APIURL // https://slack.com/api/
	DefaultMaxFileBytes = 100 << 20
	DefaultTimeout      = 30 * time.Second
)

// EventType is the type of the metadata a posted message carries; its
// payload is {"delivery_id":"…"}.
const EventType = "herald_delivery"

// maxResponse bounds how much of a response is read; maxErrorBody, of an
// answer whose status is not 200.
const (
	maxResponse  = 4 << 20
	maxErrorBody = 64 << 10
)

// Config configures a Sender.
type Config struct {
	BaseURL      string // Web API base ending in /api/; empty means DefaultBaseURL
	MaxFileBytes int64  // largest attachment; 0 means DefaultMaxFileBytes
	// MaxAttachmentBytes bounds the files of a message in total: beyond it
	// they travel as download links (channels.FitFiles); 0: no bound.
	MaxAttachmentBytes int64
	Timeout            time.Duration
	Logger             *slog.Logger // nil means no log
	Conns              int          // connections kept open to the API: the sends run at once; at least 2
}

// Sender posts messages and shares files in Slack conversations. The token
// comes from each channel, so one Sender serves every workspace. It is safe
// for concurrent use.
type Sender struct {
	base      *url.URL // nil when Config.BaseURL is not an absolute URL
	maxFile   int64
	maxFiles  int64 // of a message, in total
	timeout   time.Duration
	log       *slog.Logger
	transport *http.Transport
	client    *http.Client
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
	} else if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/" // slack-go appends the method name
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	transport := channels.Transport(cfg.Conns)
	return &Sender{
		base: base, maxFile: cfg.MaxFileBytes, maxFiles: cfg.MaxAttachmentBytes, timeout: cfg.Timeout, log: cfg.Logger, transport: transport,
		client: &http.Client{
			Transport: transport,
			// The Web API does not redirect; a redirect is answered as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Kind is the Slack kind.
func (s *Sender) Kind() channels.Kind { return Kind }

// Destination names the workspace a channel's messages go to by its bot
// token, which belongs to one workspace: a digest of it, never the token.
func (s *Sender) Destination(c channels.Channel) string {
	sum := sha256.Sum256([]byte(c.Secret))
	return "workspace " + hex.EncodeToString(sum[:6])
}

// Close releases the sender's idle connections. A Sender may still be used
// after Close.
func (s *Sender) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}

// Send posts the message to the channel's conversation, or shares its
// attachments there with the text as their comment, and returns the
// provider id: "<conversation>/<ts>" for a post, the first file's id for a
// share.
func (s *Sender) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("send to slack: %w", err)
	}
	id, err := s.send(ctx, m)
	if err != nil {
		return "", scrub(fmt.Errorf("send to slack: %w", err), m.Channel.Secret)
	}
	return id, nil
}

func (s *Sender) send(ctx context.Context, m channels.Message) (string, error) {
	if s.base == nil {
		return "", channels.Permanent(errors.New("the API base URL is not an absolute URL"))
	}
	var t Target
	if err := m.Channel.Decode(&t); err != nil {
		return "", err
	}
	switch {
	case t.Channel == "":
		return "", channels.Permanent(fmt.Errorf("channel %s names no conversation", m.Channel.ID))
	case m.Channel.Secret == "":
		return "", channels.Permanent(fmt.Errorf("channel %s has no token", m.Channel.ID))
	}
	if _, err := channels.FitFiles(&m, s.maxFiles, "slack.maxAttachmentBytes"); err != nil {
		return "", err
	}
	files, err := s.check(m.Files())
	if err != nil {
		return "", err
	}
	text := Text(m.Subject, m.Text)
	if text == "" && len(files) == 0 {
		return "", channels.Permanent(errors.New("empty message"))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c := &call{client: s.client}
	api := slack.New(m.Channel.Secret,
		slack.OptionAPIURL(s.base.String()),
		slack.OptionHTTPClient(c),
		slack.OptionOnWarning(func(method string, _ any, w *slack.Warning) {
			s.log.Debug("slack warning", "delivery", m.DeliveryID, "method", method, "codes", w.Codes, "warnings", w.Warnings)
		}),
	)
	if len(files) == 0 {
		return s.post(ctx, api, c, t.Channel, text, m)
	}
	return s.share(ctx, api, c, t.Channel, text, files)
}

// post sends one chat.postMessage.
func (s *Sender) post(ctx context.Context, api *slack.Client, c *call, channel, text string, m channels.Message) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if blocks := Blocks(m.Subject, m.Text); len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if m.DeliveryID != "" {
		opts = append(opts, slack.MsgOptionMetadata(slack.SlackMetadata{
			EventType: EventType, EventPayload: map[string]any{"delivery_id": m.DeliveryID},
		}))
	}
	ch, ts, err := api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return "", fmt.Errorf("chat.postMessage: %w", classify(ctx, err, c, true))
	}
	if ts == "" {
		// Posted, so a retry could post it twice.
		return "", channels.Permanent(errors.New("chat.postMessage: accepted without a message timestamp"))
	}
	if ch == "" {
		ch = channel
	}
	return ch + "/" + ts, nil
}

// file is an attachment checked for sharing.
type file struct {
	name string
	path string
	size int64
}

// check stats every attachment before anything is sent: a missing file, a
// folder or a file over the limit fails the delivery for good.
func (s *Sender) check(atts []channels.Attachment) ([]file, error) {
	var files []file
	for _, a := range atts {
		name := a.Name
		if name == "" {
			name = filepath.Base(a.Path)
		}
		info, err := os.Stat(a.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, channels.Permanent(fmt.Errorf("attachment %q: %w", name, err))
		case err != nil:
			return nil, fmt.Errorf("attachment %q: %w", name, err)
		case !info.Mode().IsRegular():
			return nil, channels.Permanent(fmt.Errorf("attachment %q: %s is not a regular file", name, a.Path))
		case info.Size() == 0:
			return nil, channels.Permanent(fmt.Errorf("attachment %q is empty, which Slack does not take", name))
		case info.Size() > s.maxFile:
			return nil, channels.Permanent(fmt.Errorf("attachment %q has %d bytes, more than the %d allowed", name, info.Size(), s.maxFile))
		}
		files = append(files, file{name: name, path: a.Path, size: info.Size()})
	}
	return files, nil
}

// share uploads every file and shares them all in one message.
func (s *Sender) share(ctx context.Context, api *slack.Client, c *call, channel, text string, files []file) (string, error) {
	summaries := make([]slack.FileSummary, 0, len(files))
	for _, f := range files {
		id, err := s.upload(ctx, api, c, f)
		if err != nil {
			return "", fmt.Errorf("attachment %q: %w", f.name, err)
		}
		summaries = append(summaries, slack.FileSummary{ID: id, Title: f.name})
	}
	resp, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: summaries, Channel: channel, InitialComment: text,
	})
	if err != nil {
		return "", fmt.Errorf("files.completeUploadExternal: %w", classify(ctx, err, c, true))
	}
	if len(resp.Files) > 0 && resp.Files[0].ID != "" {
		return resp.Files[0].ID, nil
	}
	return summaries[0].ID, nil
}

// upload gets an upload URL for f and streams f's bytes to it.
func (s *Sender) upload(ctx context.Context, api *slack.Client, c *call, f file) (string, error) {
	u, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: f.name, FileSize: int(f.size)})
	if err != nil {
		return "", fmt.Errorf("files.getUploadURLExternal: %w", classify(ctx, err, c, false))
	}
	if u.UploadURL == "" || u.FileID == "" {
		return "", errors.New("files.getUploadURLExternal: no upload URL or file id in the answer")
	}
	if err := s.mayUpload(u.UploadURL); err != nil {
		return "", channels.Permanent(err)
	}
	r, err := os.Open(f.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", channels.Permanent(err)
		}
		return "", err
	}
	defer r.Close()
	// Exactly the size announced: a file that grew since is cut, one that
	// shrank fails the delivery.
	body := &counter{r: io.LimitReader(r, f.size)}
	err = api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Reader: body, Filename: f.name})
	switch {
	case err != nil:
		return "", fmt.Errorf("upload: %w", classify(ctx, err, c, false))
	case body.n.Load() != f.size:
		return "", channels.Permanent(fmt.Errorf("upload: the file shrank from %d to %d bytes while it was sent", f.size, body.n.Load()))
	}
	return u.FileID, nil
}

// counter counts the bytes read through it; slack-go reads it in a
// goroutine of its own.
type counter struct {
	r io.Reader
	n atomic.Int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// mayUpload checks an upload URL as slack-go does before it sends the token
// there, so that a refusal is known to be permanent: https on a Slack host,
// or the API's own scheme and host.
func (s *Sender) mayUpload(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("files.getUploadURLExternal: the upload URL does not parse: %w", err)
	}
	host := strings.ToLower(u.Hostname())
	slackHost := u.Scheme == "https" && (host == "slack.com" || strings.HasSuffix(host, ".slack.com") ||
		host == "slack-gov.com" || strings.HasSuffix(host, ".slack-gov.com"))
	if slackHost || (u.Scheme == s.base.Scheme && strings.EqualFold(u.Host, s.base.Host)) {
		return nil
	}
	return fmt.Errorf("files.getUploadURLExternal: the upload URL is on %s://%s, neither Slack nor the API's host", u.Scheme, u.Host)
}

// call is the HTTP client of one send: it records the status, the
// Retry-After header and, for a status other than 200 (whose body slack-go
// does not read), Slack's error code of the last response; and it bounds
// what is read of a response.
type call struct {
	client     *http.Client
	status     int    // of the last response; 0 when none arrived
	retryAfter string // its Retry-After header
	code       string // its Slack error code, when its status was not 200
}

func (c *call) Do(req *http.Request) (*http.Response, error) {
	c.status, c.retryAfter, c.code = 0, "", ""
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	c.status, c.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var answer struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &answer) == nil {
			c.code = answer.Error
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, nil
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxResponse), resp.Body}
	return resp, nil
}

// Slack error codes after which no retry can pass.
var permanentCodes = map[string]bool{
	"channel_not_found":       true,
	"invalid_auth":            true,
	"not_authed":              true,
	"account_inactive":        true,
	"token_revoked":           true,
	"token_expired":           true,
	"not_in_channel":          true,
	"is_archived":             true,
	"msg_too_long":            true,
	"no_text":                 true,
	"invalid_blocks":          true,
	"invalid_blocks_format":   true,
	"invalid_metadata_format": true,
	"invalid_metadata_schema": true,
	"restricted_action":       true,
	"missing_scope":           true,
	"no_permission":           true,
	"ekm_access_denied":       true,
	"team_access_not_granted": true,
}

// classify decides whether a failed call may pass later. A context that
// ended, a rate limit, a 5xx answer or a network failure may; so may a
// Slack error not known to be permanent. An answer that came back 200 but
// unreadable is permanent when the call may have posted (final), since a
// retry could post twice.
func classify(ctx context.Context, err error, c *call, final bool) error {
	var (
		limited *slack.RateLimitedError
		status  slack.StatusCodeError
		answer  slack.SlackErrorResponse
	)
	switch {
	case ctx.Err() != nil:
		return err
	case errors.As(err, &limited):
		return retryAfter(err, limited.RetryAfter)
	case errors.As(err, &answer):
		err = describe(err, answer)
		switch {
		case answer.Err == "ratelimited":
			return retryAfter(err, parseRetryAfter(c.retryAfter))
		case permanentCodes[answer.Err]:
			return channels.Permanent(err)
		}
		return err
	case errors.As(err, &status):
		if c.code != "" {
			err = fmt.Errorf("%w: %s", err, c.code)
		}
		switch code := status.Code; {
		case code == http.StatusTooManyRequests:
			return retryAfter(err, parseRetryAfter(c.retryAfter))
		case permanentCodes[c.code]:
			return channels.Permanent(err)
		case code == http.StatusRequestTimeout, code >= 500:
			return err
		}
		return channels.Permanent(err)
	case c.status == http.StatusTooManyRequests:
		// A Retry-After slack-go could not read, such as an HTTP date.
		return retryAfter(err, parseRetryAfter(c.retryAfter))
	case c.status == http.StatusOK && final:
		return channels.Permanent(fmt.Errorf("accepted, but the answer is unreadable: %w", err))
	}
	return err
}

// describe adds Slack's scope diagnostics to an error code.
func describe(err error, answer slack.SlackErrorResponse) error {
	if answer.Needed == "" {
		return err
	}
	return fmt.Errorf("%w (needed: %s; provided: %s)", err, answer.Needed, answer.Provided)
}

func retryAfter(err error, d time.Duration) error {
	if d <= 0 {
		return err
	}
	return channels.RetryAfter(err, d)
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// scrub makes sure err's message does not hold token. slack-go sends the
// token in request bodies and headers, never in URLs, so its errors should
// not hold it; should one, the error is replaced by one with the token
// taken out that keeps its class but wraps nothing.
func scrub(err error, token string) error {
	if token == "" || !strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), token) {
		return err
	}
	clean := errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
	switch d, ok := channels.RetryDelay(err); {
	case channels.IsPermanent(err):
		return channels.Permanent(clean)
	case ok:
		return channels.RetryAfter(clean, d)
	}
	return clean
}
