package channeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
)

// ChatterServer speaks the Salesforce OAuth 2 password grant
// (POST /services/oauth2/token) and the Chatter feed-elements API
// (POST /services/data/vNN.N/chatter/feed-elements) over HTTP on 127.0.0.1.
// It is its own login server and instance: the token's instance_url is URL.
type ChatterServer struct {
	srv          *httptest.Server
	clientID     string
	clientSecret string
	username     string
	password     string

	mu            sync.Mutex
	posts         inbox[ChatterPost]
	tokens        map[string]bool // issued access tokens that are still valid
	tokenRequests int
	lifetime      time.Duration
	failN         int
	failStatus    int
	failCode      string

	HTTPGate
}

// ChatterPost is one feed item a ChatterServer accepted.
type ChatterPost struct {
	ID              string
	SubjectID       string
	FeedElementType string
	Text            string // the text segments joined
	IdempotencyKey  string // the request's Idempotency-Key header
	Token           string // the bearer token it was posted with
}

// NewChatterServer starts a Chatter-compatible login and feed API with a
// fresh connected app (client id and secret) and user, and closes it when
// the test ends.
func NewChatterServer(t testing.TB) *ChatterServer {
	t.Helper()
	s := &ChatterServer{
		clientID:     "3MVG9" + randomHex(12),
		clientSecret: randomHex(16),
		username:     "alerts@example.com",
		password:     "pw" + randomHex(8) + "SECTOKEN" + randomHex(6),
		tokens:       make(map[string]bool),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /services/oauth2/token", s.token)
	mux.HandleFunc("POST /services/data/{version}/chatter/feed-elements", s.feedElements)
	s.srv = StartHTTP(t, &s.HTTPGate, mux)
	return s
}

// URL is the login URL and the instance URL.
func (s *ChatterServer) URL() string { return s.srv.URL }

// ClientID is the connected app's consumer key.
func (s *ChatterServer) ClientID() string { return s.clientID }

// ClientSecret is the connected app's consumer secret.
func (s *ChatterServer) ClientSecret() string { return s.clientSecret }

// Close shuts the server down; it is safe to call more than once.
func (s *ChatterServer) Close() { s.srv.Close() }

// Posts returns the feed items accepted so far, oldest first.
func (s *ChatterServer) Posts() []ChatterPost {
	return s.posts.all()
}

// Await blocks until at least n feed items were accepted, then returns them
// all, or returns ctx's error.
func (s *ChatterServer) Await(ctx context.Context, n int) ([]ChatterPost, error) {
	return s.posts.await(ctx, n, "posts")
}

// TokenRequests is how many token requests arrived, granted or not.
func (s *ChatterServer) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenRequests
}

// ExpireTokens invalidates every access token issued so far: the next feed
// request with one of them gets 401 INVALID_SESSION_ID.
func (s *ChatterServer) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

// SetTokenLifetime makes token responses carry expires_in (whole seconds);
// zero, the default, leaves it out as Salesforce does.
func (s *ChatterServer) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lifetime = d
}

// FailNext makes the feed endpoint answer the next n requests that carry a
// valid token with HTTP status and a Chatter error code such as
// "INVALID_INPUT" or "SERVER_UNAVAILABLE".
func (s *ChatterServer) FailNext(n, status int, errorCode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failStatus, s.failCode = n, status, errorCode
}

// Channel is a feed-chat channel of the server's user.
func (s *ChatterServer) Channel() channels.Channel {
	return channels.Channel{ID: "chatter-peer", Kind: "feedchat", Config: config(map[string]string{"username": s.username}),
		Secret: s.password}
}

// Deliveries is Posts reduced to what every channel kind has; the key is
// the Idempotency-Key header.
func (s *ChatterServer) Deliveries() []Delivery {
	var ds []Delivery
	for _, p := range s.Posts() {
		ds = append(ds, Delivery{Key: p.IdempotencyKey, Text: p.Text})
	}
	return ds
}

// Fail answers the next n deliveries with 503 SERVER_UNAVAILABLE (Transient)
// or 400 INVALID_INPUT (Permanent).
func (s *ChatterServer) Fail(n int, f Failure) {
	if f == Permanent {
		s.FailNext(n, http.StatusBadRequest, "INVALID_INPUT")
		return
	}
	s.FailNext(n, http.StatusServiceUnavailable, "SERVER_UNAVAILABLE")
}

func (s *ChatterServer) token(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.tokenRequests++
	s.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request", "unreadable form")
		return
	}
	f := r.PostForm
	switch {
	case f.Get("grant_type") != "password":
		oauthError(w, "unsupported_grant_type", "grant type not supported")
		return
	case f.Get("client_id") != s.clientID:
		oauthError(w, "invalid_client_id", "client identifier invalid")
		return
	case f.Get("client_secret") != s.clientSecret:
		oauthError(w, "invalid_client", "invalid client credentials")
		return
	case f.Get("username") != s.username || f.Get("password") != s.password:
		oauthError(w, "invalid_grant", "authentication failure")
		return
	}
	token := "00D" + randomHex(4) + "!" + randomHex(24)
	now := time.Now()
	body := map[string]any{
		"access_token": token,
		"instance_url": s.srv.URL,
		"id":           s.srv.URL + "/id/00D000000000001/005000000000001",
		"token_type":   "Bearer",
		"issued_at":    strconv.FormatInt(now.UnixMilli(), 10),
		"signature":    "c2lnbmF0dXJl",
	}
	s.mu.Lock()
	s.tokens[token] = true
	if s.lifetime > 0 {
		body["expires_in"] = int(s.lifetime / time.Second)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

var apiVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)

type feedInput struct {
	Body struct {
		MessageSegments []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"messageSegments"`
	} `json:"body"`
	FeedElementType string `json:"feedElementType"`
	SubjectID       string `json:"subjectId"`
}

func (s *ChatterServer) feedElements(w http.ResponseWriter, r *http.Request) {
	if !apiVersion.MatchString(r.PathValue("version")) {
		chatterError(w, http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	valid := ok && s.tokens[token]
	s.mu.Unlock()
	if !valid {
		chatterError(w, http.StatusUnauthorized, "INVALID_SESSION_ID", "Session expired or invalid")
		return
	}
	if status, code := s.scripted(); status != 0 {
		chatterError(w, status, code, "Scripted failure")
		return
	}
	var in feedInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		chatterError(w, http.StatusBadRequest, "JSON_PARSER_ERROR", err.Error())
		return
	}
	var text strings.Builder
	for _, seg := range in.Body.MessageSegments {
		if seg.Type != "Text" {
			chatterError(w, http.StatusBadRequest, "INVALID_INPUT", "unsupported segment type "+seg.Type)
			return
		}
		text.WriteString(seg.Text)
	}
	switch {
	case in.FeedElementType != "FeedItem":
		chatterError(w, http.StatusBadRequest, "INVALID_INPUT", "feedElementType must be FeedItem")
		return
	case in.SubjectID == "":
		chatterError(w, http.StatusBadRequest, "INVALID_INPUT", "subjectId is required")
		return
	case text.Len() == 0:
		chatterError(w, http.StatusBadRequest, "INVALID_INPUT", "the body is empty")
		return
	}
	p := s.record(ChatterPost{
		SubjectID: in.SubjectID, FeedElementType: in.FeedElementType, Text: text.String(),
		IdempotencyKey: r.Header.Get("Idempotency-Key"), Token: token,
	})
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": p.ID, "feedElementType": "FeedItem", "type": "TextPost",
		"body":        map[string]any{"text": p.Text},
		"parent":      map[string]any{"id": "005000000000001"},
		"createdDate": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"url":         "/services/data/" + r.PathValue("version") + "/chatter/feed-elements/" + p.ID,
	})
}

func (s *ChatterServer) scripted() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failN == 0 {
		return 0, ""
	}
	s.failN--
	return s.failStatus, s.failCode
}

func (s *ChatterServer) record(p ChatterPost) ChatterPost {
	return s.posts.add(func(n int) ChatterPost {
		p.ID = fmt.Sprintf("0D5%015d", n)
		return p
	})
}

func oauthError(w http.ResponseWriter, code, description string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": description})
}

func chatterError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, []map[string]string{{"errorCode": code, "message": message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
