package channeltest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/channels"
)

// TwilioServer speaks Twilio's Messages API (POST
// /2010-04-01/Accounts/{sid}/Messages.json) over HTTP on 127.0.0.1: it checks
// Basic auth against its account SID and auth token, validates the form the
// way Twilio does and answers with Twilio's JSON shapes.
type TwilioServer struct {
	srv   *httptest.Server
	sid   string
	token string

	mu         sync.Mutex
	msgs       inbox[SMS]
	requests   int
	failN      int
	failStatus int
	failCode   int

	HTTPGate
}

// SMS is one message a TwilioServer accepted.
type SMS struct {
	SID            string
	AccountSID     string
	From           string
	To             string
	Body           string
	IdempotencyKey string // the request's Idempotency-Key header
}

// NewTwilioServer starts a Twilio Messages API with a fresh account SID and
// auth token and closes it when the test ends.
func NewTwilioServer(t testing.TB) *TwilioServer {
	t.Helper()
	s := &TwilioServer{
		sid:   "AC" + randomHex(16),
		token: randomHex(16),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2010-04-01/Accounts/{sid}/Messages.json", s.createMessage)
	s.srv = StartHTTP(t, &s.HTTPGate, mux)
	return s
}

// URL is the API base URL, for sms.Config.BaseURL.
func (s *TwilioServer) URL() string { return s.srv.URL }

// AccountSID is the account the server accepts.
func (s *TwilioServer) AccountSID() string { return s.sid }

// AuthToken is the account's auth token.
func (s *TwilioServer) AuthToken() string { return s.token }

// Close shuts the server down; it is safe to call more than once.
func (s *TwilioServer) Close() { s.srv.Close() }

// Messages returns the messages accepted so far, oldest first.
func (s *TwilioServer) Messages() []SMS {
	return s.msgs.all()
}

// Requests is how many create-message requests arrived, accepted or not.
func (s *TwilioServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Await blocks until at least n messages were accepted, then returns them
// all, or returns ctx's error.
func (s *TwilioServer) Await(ctx context.Context, n int) ([]SMS, error) {
	return s.msgs.await(ctx, n, "messages")
}

// FailNext makes the server answer the next n authenticated requests with
// HTTP status and Twilio error code (for example 400 and 21211, invalid To
// number; 429 and 20429, too many requests).
func (s *TwilioServer) FailNext(n, status, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failStatus, s.failCode = n, status, code
}

// Channel is an SMS channel of the server's account.
func (s *TwilioServer) Channel() channels.Channel {
	return channels.Channel{
		ID: "twilio-peer", Kind: "sms", Secret: s.token,
		Config: config(map[string]string{"username": s.sid, "from": "+15005550006", "to": "+15005550010"}),
	}
}

// Deliveries is Messages reduced to what every channel kind has; the key is
// the Idempotency-Key header.
func (s *TwilioServer) Deliveries() []Delivery {
	var ds []Delivery
	for _, m := range s.Messages() {
		ds = append(ds, Delivery{Key: m.IdempotencyKey, Text: m.Body})
	}
	return ds
}

// Fail answers the next n deliveries with 429/20429 (Transient) or
// 400/21211 (Permanent).
func (s *TwilioServer) Fail(n int, f Failure) {
	if f == Permanent {
		s.FailNext(n, http.StatusBadRequest, 21211)
		return
	}
	s.FailNext(n, http.StatusTooManyRequests, 20429)
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

func (s *TwilioServer) createMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	user, pass, ok := r.BasicAuth()
	if !ok || user != s.sid || pass != s.token {
		twilioError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	if r.PathValue("sid") != s.sid {
		twilioError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	if status, code := s.scripted(); status != 0 {
		twilioError(w, status, code, "Scripted failure")
		return
	}
	if err := r.ParseForm(); err != nil {
		twilioError(w, http.StatusBadRequest, 21601, "Unreadable request")
		return
	}
	m := SMS{
		AccountSID: s.sid, From: r.PostForm.Get("From"), To: r.PostForm.Get("To"),
		Body: r.PostForm.Get("Body"), IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	switch {
	case m.To == "" || !e164.MatchString(m.To):
		twilioError(w, http.StatusBadRequest, 21211, fmt.Sprintf("Invalid 'To' Phone Number: %s", m.To))
		return
	case m.From == "":
		twilioError(w, http.StatusBadRequest, 21603, "A 'From' phone number is required.")
		return
	case !e164.MatchString(m.From):
		twilioError(w, http.StatusBadRequest, 21212, fmt.Sprintf("Invalid From Number: %s", m.From))
		return
	case m.Body == "":
		twilioError(w, http.StatusBadRequest, 21602, "Message body is required.")
		return
	case utf8.RuneCountInString(m.Body) > 1600:
		twilioError(w, http.StatusBadRequest, 21617, "The concatenated message body exceeds the 1600 character limit.")
		return
	}
	m.SID = s.record(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"sid": m.SID, "account_sid": m.AccountSID, "to": m.To, "from": m.From, "body": m.Body,
		"status": "queued", "direction": "outbound-api", "api_version": "2010-04-01",
		"num_segments": "1", "num_media": "0", "error_code": nil, "error_message": nil,
		"date_created": time.Now().UTC().Format(time.RFC1123Z),
		"uri":          "/2010-04-01/Accounts/" + m.AccountSID + "/Messages/" + m.SID + ".json",
	})
}

func (s *TwilioServer) scripted() (status, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failN == 0 {
		return 0, 0
	}
	s.failN--
	return s.failStatus, s.failCode
}

func (s *TwilioServer) record(m SMS) string {
	return s.msgs.add(func(n int) SMS {
		m.SID = fmt.Sprintf("SM%032x", n)
		return m
	}).SID
}

func twilioError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"code": code, "message": message, "status": status,
		"more_info": "https://www.twilio.com/docs/errors/" + strconv.Itoa(code),
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
