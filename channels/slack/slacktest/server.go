package slacktest

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
)

// Bounds on what the server reads.
const (
	MaxBody   = 4 << 20  // a Web API request body
	MaxUpload = 64 << 20 // one file's bytes
)

// Slack's limits, in characters, that the server checks.
const (
	maxText    = 40000
	maxHeader  = 150
	maxSection = 3000
	maxBlocks  = 50
)

// Failure is how the server answers a call it was told to fail.
type Failure struct {
	Status     int    // HTTP status; 0 means 200, as Slack answers most errors
	Error      string // Slack's error code, as in {"ok":false,"error":"channel_not_found"}
	RetryAfter int    // seconds, sent as the Retry-After header; 0 leaves it out
}

var (
	// RateLimited is Slack's answer to too many calls: HTTP 429, Retry-After: 1
	// and the error ratelimited. A retry may pass.
	RateLimited = Failure{Status: http.StatusTooManyRequests, Error: "ratelimited", RetryAfter: 1}
	// ChannelNotFound is Slack's answer for a conversation that does not exist
	// or that the token cannot see. No retry can pass.
	ChannelNotFound = Failure{Error: "channel_not_found"}
)

// Message is one message the server accepted: a chat.postMessage, or a
// files.completeUploadExternal that shared files in a conversation.
type Message struct {
	Channel    string          // conversation id
	TS         string          // message timestamp
	Text       string          // the text as sent (escaped mrkdwn); for a share, its initial_comment
	Blocks     json.RawMessage // the blocks as sent; nil when none
	DeliveryID string          // metadata.event_payload.delivery_id; "" when none
	EventType  string          // metadata.event_type; "" when none
	Files      []File          // the files a share shared; nil for a post
}

// File is one uploaded file.
type File struct {
	ID    string
	Name  string // the filename given to files.getUploadURLExternal
	Title string // the title given to files.completeUploadExternal
	Size  int64  // bytes uploaded
	Data  []byte
}

// Server is a fake Slack Web API with one bot token and one conversation.
type Server struct {
	srv     *httptest.Server
	token   string
	channel string
	team    string

	mu      sync.Mutex
	msgs    []Message
	files   map[string]*upload // by file id
	uploads map[string]*upload // by the key in the upload URL
	calls   int
	serial  int
	failN   int
	fail    Failure
	byName  map[string]script // failures of one method

	channeltest.HTTPGate
}

// script is a failure to answer the next n calls with.
type script struct {
	n    int
	fail Failure
}

// upload is a file from files.getUploadURLExternal on.
type upload struct {
	file     File
	length   int64 // as announced
	uploaded bool
	shared   bool
}

// New starts a fake Slack Web API with a fresh bot token and conversation
// and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		token:   fmt.Sprintf("xoxb-%d-%d-%s", 1000000000+randomInt(), 1000000000+randomInt(), randomAlnum(24, false)),
		channel: "C" + randomAlnum(10, true),
		team:    "T" + randomAlnum(10, true),
		files:   make(map[string]*upload),
		uploads: make(map[string]*upload),
		byName:  make(map[string]script),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{method}", s.api)
	mux.HandleFunc("POST /upload/v1/{key}", s.upload)
	s.srv = channeltest.StartHTTP(t, &s.HTTPGate, mux)
	return s
}

// URL is the Web API's base URL, ending in /api/, for the sender's BaseURL.
func (s *Server) URL() string { return s.srv.URL + "/api/" }

// Token is the bot token the server accepts.
func (s *Server) Token() string { return s.token }

// ChannelID is the id of the server's one conversation.
func (s *Server) ChannelID() string { return s.channel }

// Close shuts the server down; it is safe to call more than once.
func (s *Server) Close() { s.srv.Close() }

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.msgs))
	for i, m := range s.msgs {
		m.Files = append([]File(nil), m.Files...)
		out[i] = m
	}
	return out
}

// Calls is how many Web API calls arrived with a valid token, answered or
// failed; uploads to an upload URL are not calls.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// FailNext makes the server answer the next n Web API calls that carry a
// valid token with f.
func (s *Server) FailNext(n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.fail = n, f
}

// FailMethod makes the server answer the next n calls of method (such as
// "files.completeUploadExternal") that carry a valid token with f. It
// comes before FailNext: a call it fails does not count for FailNext.
func (s *Server) FailMethod(method string, n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byName[method] = script{n: n, fail: f}
}

// Channel is a Slack channel of the server's conversation and token.
func (s *Server) Channel() channels.Channel {
	config, _ := json.Marshal(map[string]string{"channel": s.channel})
	return channels.Channel{ID: "slack-peer", Kind: "slack", Config: config, Secret: s.token}
}

// Deliveries is Messages reduced to what every channel kind has: the key is
// the delivery id of the message's metadata, and the text is the message's
// text as Slack shows it, its entities decoded.
func (s *Server) Deliveries() []channeltest.Delivery {
	var ds []channeltest.Delivery
	for _, m := range s.Messages() {
		ds = append(ds, channeltest.Delivery{Key: m.DeliveryID, Text: Unescape(m.Text)})
	}
	return ds
}

// Fail answers the next n calls with RateLimited (channeltest.Transient) or
// ChannelNotFound (channeltest.Permanent).
func (s *Server) Fail(n int, f channeltest.Failure) {
	if f == channeltest.Permanent {
		s.FailNext(n, ChannelNotFound)
		return
	}
	s.FailNext(n, RateLimited)
}

var _ channeltest.Peer = (*Server)(nil)

// Unescape decodes the three entities Slack's text escapes.
func Unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// apiError is an {"ok":false} answer.
type apiError struct {
	status     int
	code       string
	retryAfter int
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	params, form, err := readParams(r)
	if err != nil {
		code := "invalid_form_data"
		if !form {
			code = "invalid_json"
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, apiError{status: http.StatusRequestEntityTooLarge, code: "request_too_large"})
			return
		}
		writeError(w, apiError{code: code})
		return
	}
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !bearer && form {
		token = params.Get("token")
	}
	switch {
	case token == "":
		writeError(w, apiError{code: "not_authed"})
		return
	case token != s.token:
		writeError(w, apiError{code: "invalid_auth"})
		return
	}
	if f, failed := s.scripted(r.PathValue("method")); failed {
		writeError(w, apiError{status: f.Status, code: f.Error, retryAfter: f.RetryAfter})
		return
	}
	var (
		answer map[string]any
		e      *apiError
	)
	switch method := r.PathValue("method"); method {
	case "auth.test":
		answer = map[string]any{"url": s.srv.URL + "/", "team": "Herald Test", "user": "herald", "team_id": s.team,
			"user_id": "U0HERALD01", "bot_id": "B0HERALD01", "is_enterprise_install": false}
	case "chat.postMessage":
		answer, e = s.postMessage(params)
	case "files.getUploadURLExternal":
		answer, e = s.getUploadURL(params)
	case "files.completeUploadExternal":
		answer, e = s.completeUpload(params)
	default:
		e = &apiError{status: http.StatusNotFound, code: "unknown_method"}
	}
	if e != nil {
		writeError(w, *e)
		return
	}
	answer["ok"] = true
	writeJSON(w, http.StatusOK, answer)
}

// readParams reads a call's arguments from a form (urlencoded or
// multipart) or a JSON object, whose strings are taken as they are and
// other values as JSON text.
func readParams(r *http.Request) (url.Values, bool, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var raw map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
			return nil, false, err
		}
		v := url.Values{}
		for k, m := range raw {
			var s string
			if json.Unmarshal(m, &s) == nil {
				v.Set(k, s)
			} else {
				v.Set(k, string(m))
			}
		}
		return v, false, nil
	case "multipart/form-data":
		if err := r.ParseMultipartForm(MaxBody); err != nil {
			return nil, true, err
		}
		return r.Form, true, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, true, err
	}
	return r.Form, true, nil
}

func (s *Server) scripted(method string) (Failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if sc := s.byName[method]; sc.n > 0 {
		sc.n--
		s.byName[method] = sc
		return sc.fail, true
	}
	if s.failN == 0 {
		return Failure{}, false
	}
	s.failN--
	return s.fail, true
}

func (s *Server) postMessage(p url.Values) (map[string]any, *apiError) {
	m := Message{Channel: p.Get("channel"), Text: p.Get("text")}
	if m.Channel != s.channel {
		return nil, &apiError{code: "channel_not_found"}
	}
	if b := p.Get("blocks"); b != "" {
		n, code := checkBlocks(b)
		if code != "" {
			return nil, &apiError{code: code}
		}
		if n > 0 {
			m.Blocks = json.RawMessage(b)
		}
	}
	switch {
	case m.Text == "" && m.Blocks == nil && p.Get("attachments") == "":
		return nil, &apiError{code: "no_text"}
	case utf8.RuneCountInString(m.Text) > maxText:
		return nil, &apiError{code: "msg_too_long"}
	}
	if md := p.Get("metadata"); md != "" {
		var meta struct {
			EventType    *string        `json:"event_type"`
			EventPayload map[string]any `json:"event_payload"`
		}
		if err := json.Unmarshal([]byte(md), &meta); err != nil || meta.EventType == nil || *meta.EventType == "" || meta.EventPayload == nil {
			return nil, &apiError{code: "invalid_metadata_format"}
		}
		m.EventType = *meta.EventType
		m.DeliveryID, _ = meta.EventPayload["delivery_id"].(string)
	}
	m = s.record(m)
	msg := map[string]any{"type": "message", "subtype": "bot_message", "text": m.Text, "ts": m.TS,
		"bot_id": "B0HERALD01", "user": "U0HERALD01", "team": s.team}
	if m.Blocks != nil {
		msg["blocks"] = m.Blocks
	}
	return map[string]any{"channel": m.Channel, "ts": m.TS, "message": msg}, nil
}

// checkBlocks validates blocks as Slack does, as far as the block types
// it knows go (header, section, divider, context), and returns how many
// there are or the error code.
func checkBlocks(raw string) (int, string) {
	var blocks []struct {
		Type     string            `json:"type"`
		Text     *textObject       `json:"text"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return 0, "invalid_blocks_format"
	}
	if len(blocks) > maxBlocks {
		return 0, "invalid_blocks"
	}
	for _, b := range blocks {
		switch b.Type {
		case "header":
			if !b.Text.valid(maxHeader) || b.Text.Type != "plain_text" {
				return 0, "invalid_blocks"
			}
		case "section":
			if !b.Text.valid(maxSection) {
				return 0, "invalid_blocks"
			}
		case "divider":
		case "context":
			if len(b.Elements) == 0 {
				return 0, "invalid_blocks"
			}
		default:
			return 0, "invalid_blocks"
		}
	}
	return len(blocks), ""
}

type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (t *textObject) valid(max int) bool {
	return t != nil && (t.Type == "plain_text" || t.Type == "mrkdwn") && t.Text != "" && utf8.RuneCountInString(t.Text) <= max
}

func (s *Server) getUploadURL(p url.Values) (map[string]any, *apiError) {
	name := p.Get("filename")
	length, err := strconv.ParseInt(p.Get("length"), 10, 64)
	if name == "" || err != nil || length < 1 {
		return nil, &apiError{code: "invalid_arguments"}
	}
	if length > MaxUpload {
		return nil, &apiError{code: "file_too_large"}
	}
	key := randomAlnum(32, false)
	u := &upload{file: File{ID: "F" + randomAlnum(10, true), Name: name}, length: length}
	s.mu.Lock()
	s.files[u.file.ID], s.uploads[key] = u, u
	s.mu.Unlock()
	return map[string]any{"upload_url": s.srv.URL + "/upload/v1/" + key, "file_id": u.file.ID}, nil
}

// upload takes a file's bytes, as the raw body or as the file of a
// multipart form, and answers as Slack's upload URLs do.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	u := s.uploads[r.PathValue("key")]
	s.mu.Unlock()
	if u == nil {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload+1<<20)
	var body io.Reader = r.Body
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		mr, err := r.MultipartReader()
		if err != nil {
			http.Error(w, "Bad Request", http.StatusBadRequest)
			return
		}
		for {
			part, err := mr.NextPart()
			if err != nil {
				http.Error(w, "Bad Request: no file in the form", http.StatusBadRequest)
				return
			}
			if part.FileName() != "" || part.FormName() == "file" {
				body = part
				break
			}
		}
	}
	data, err := io.ReadAll(io.LimitReader(body, MaxUpload+1))
	switch {
	case err != nil:
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	case len(data) > MaxUpload:
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	s.mu.Lock()
	u.file.Data, u.file.Size, u.uploaded = data, int64(len(data)), true
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(data))
}

func (s *Server) completeUpload(p url.Values) (map[string]any, *apiError) {
	var summaries []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p.Get("files")), &summaries); err != nil || len(summaries) == 0 {
		return nil, &apiError{code: "invalid_arguments"}
	}
	channel := p.Get("channel_id")
	if channel == "" {
		channel = p.Get("channels")
	}
	if channel != "" && channel != s.channel {
		return nil, &apiError{code: "channel_not_found"}
	}
	comment := p.Get("initial_comment")
	if utf8.RuneCountInString(comment) > maxText {
		return nil, &apiError{code: "msg_too_long"}
	}
	s.mu.Lock()
	var files []File
	answer := make([]map[string]any, 0, len(summaries))
	for _, f := range summaries {
		u := s.files[f.ID]
		if u == nil || !u.uploaded || u.shared || u.file.Size != u.length {
			s.mu.Unlock()
			return nil, &apiError{code: "file_not_found"}
		}
		u.file.Title = f.Title
		if u.file.Title == "" {
			u.file.Title = u.file.Name
		}
		files = append(files, u.file)
		answer = append(answer, map[string]any{"id": u.file.ID, "title": u.file.Title})
	}
	for _, f := range summaries {
		s.files[f.ID].shared = true
	}
	s.mu.Unlock()
	if channel != "" {
		s.record(Message{Channel: channel, Text: comment, Files: files})
	}
	return map[string]any{"files": answer}, nil
}

// record keeps m with a fresh timestamp and returns it.
func (s *Server) record(m Message) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serial++
	m.TS = fmt.Sprintf("%d.%06d", time.Now().Unix(), s.serial)
	s.msgs = append(s.msgs, m)
	return m
}

func writeError(w http.ResponseWriter, e apiError) {
	if e.status == 0 {
		e.status = http.StatusOK
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(w, e.status, map[string]any{"ok": false, "error": e.code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

const (
	upperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	mixedAlnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

func randomAlnum(n int, upper bool) string {
	set := mixedAlnum
	if upper {
		set = upperAlnum
	}
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = set[int(b[i])%len(set)]
	}
	return string(b)
}

func randomInt() int {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return int(b[0])<<16 | int(b[1])<<8 | int(b[2])
}
