package channeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
)

// GoogleChatServer speaks a Google Chat space's incoming webhook over HTTP
// on 127.0.0.1: POST /v1/spaces/{space}/messages?key=…&token=… with the
// query parameters threadKey, messageReplyOption, requestId and messageId
// of spaces.messages.create. It checks the key and token, refuses a body
// past 32,000 bytes, checks the message's shape (see CheckChatMessage) and
// that a thread key comes with a messageReplyOption (without one Google
// ignores it), answers a request id it has seen with the message that id
// made, and answers with the message's name and thread as Google does.
type GoogleChatServer struct {
	srv   *httptest.Server
	space string
	key   string
	token string

	msgs    inbox[ChatMessage]
	mu      sync.Mutex             // guards byID and threads
	byID    map[string]ChatMessage // by request id
	threads map[string]string      // thread name by thread key

	tally
	HTTPGate
}

// ChatMessage is one request a GoogleChatServer accepted, with what its
// message shows read out.
type ChatMessage struct {
	Name        string // spaces/…/messages/…
	Thread      string // spaces/…/threads/…
	ThreadKey   string
	ReplyOption string // the messageReplyOption query parameter
	RequestID   string
	Repeat      bool           // the request id was seen: no message was made
	Text        string         // the text
	Card        map[string]any // the first card, as JSON decodes it
	Header      string         // its header's title
	Texts       []string       // the texts of its widgets, in order
	Rows        [][2]string    // its decoratedTexts, top label and text
	Buttons     []TeamsAction  // its buttons that open links, text and URL
}

// ChatMaxBytes is the largest body a GoogleChatServer takes, as Google Chat does.
const ChatMaxBytes = 32000

// NewGoogleChatServer starts a space's webhook with a fresh space, key and
// token, and closes it when the test ends.
func NewGoogleChatServer(t testing.TB) *GoogleChatServer {
	t.Helper()
	s := &GoogleChatServer{space: "AAAA" + randomHex(6), key: "AIza" + randomHex(16), token: randomHex(20),
		byID: map[string]ChatMessage{}, threads: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/spaces/{space}/messages", s.create)
	s.srv = StartHTTP(t, &s.HTTPGate, mux)
	return s
}

// URL is the server's base URL, for googleChat.baseURL.
func (s *GoogleChatServer) URL() string { return s.srv.URL }

// WebhookURL is the space's webhook URL as Google Chat gives it, on
// chat.googleapis.com: the channel's secret.
func (s *GoogleChatServer) WebhookURL() string {
	return "https://chat.googleapis.com/v1/spaces/" + s.space + "/messages?key=" + s.key + "&token=" + s.token
}

// Channel is a Google Chat channel of the space, as the kind keeps it.
func (s *GoogleChatServer) Channel() channels.Channel {
	return channels.Channel{ID: "chat-peer", Kind: "googlechat", Config: config(map[string]string{"host": "chat.googleapis.com"}),
		Secret: s.WebhookURL()}
}

// Messages returns the requests accepted so far, oldest first.
func (s *GoogleChatServer) Messages() []ChatMessage { return s.msgs.all() }

// Await blocks until at least n requests were accepted, then returns them
// all, or returns ctx's error.
func (s *GoogleChatServer) Await(ctx context.Context, n int) ([]ChatMessage, error) {
	return s.msgs.await(ctx, n, "Google Chat messages")
}

// Deliveries is Messages reduced to what every kind has; the key is the
// request id.
func (s *GoogleChatServer) Deliveries() []Delivery {
	var ds []Delivery
	for _, m := range s.Messages() {
		ds = append(ds, Delivery{Key: m.RequestID, Subject: m.Text, Text: strings.Join(append([]string{m.Header}, m.Texts...), "\n")})
	}
	return ds
}

// Fail answers the next n requests with 429 RESOURCE_EXHAUSTED and
// Retry-After: 1 (Transient) or 400 INVALID_ARGUMENT (Permanent).
func (s *GoogleChatServer) Fail(n int, f Failure) { s.fail(n, f) }

func (s *GoogleChatServer) create(w http.ResponseWriter, r *http.Request) {
	s.arrived()
	q := r.URL.Query()
	switch {
	case q.Get("key") != s.key:
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	case q.Get("token") != s.token || r.PathValue("space") != s.space:
		googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	if s.failScripted(w) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, ChatMaxBytes+1))
	switch {
	case err != nil:
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	case len(body) > ChatMaxBytes:
		s.refuse(w, "INVALID_ARGUMENT", fmt.Sprintf("Message too large: more than %d bytes.", ChatMaxBytes))
		return
	}
	m, err := readChatMessage(body, q)
	if err != nil {
		s.refuse(w, "INVALID_ARGUMENT", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.record(m))
}

// record keeps m, made a message unless its request id was seen, and
// returns the message as Google answers it.
func (s *GoogleChatServer) record(m ChatMessage) map[string]any {
	s.mu.Lock()
	if old, ok := s.byID[m.RequestID]; ok && m.RequestID != "" {
		m.Name, m.Thread, m.Repeat = old.Name, old.Thread, true
	}
	s.mu.Unlock()
	m = s.msgs.add(func(n int) ChatMessage {
		if m.Repeat {
			return m
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		m.Name = fmt.Sprintf("spaces/%s/messages/%s.%s", s.space, randomHex(6), randomHex(6))
		if m.ThreadKey != "" && s.threads[m.ThreadKey] != "" {
			m.Thread = s.threads[m.ThreadKey]
		} else {
			m.Thread = fmt.Sprintf("spaces/%s/threads/%s", s.space, randomHex(6))
			if m.ThreadKey != "" {
				s.threads[m.ThreadKey] = m.Thread
			}
		}
		if m.RequestID != "" {
			s.byID[m.RequestID] = m
		}
		return m
	})
	return map[string]any{"name": m.Name, "text": m.Text, "thread": map[string]any{"name": m.Thread},
		"space": map[string]any{"name": "spaces/" + s.space}, "createTime": time.Now().UTC().Format(time.RFC3339Nano)}
}

// failScripted answers a request the server was told to fail.
func (s *GoogleChatServer) failScripted(w http.ResponseWriter) bool {
	f, ok := s.scripted()
	if !ok {
		return false
	}
	if f == Permanent {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid message.")
	} else {
		w.Header().Set("Retry-After", "1")
		googleError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
	}
	return true
}

func (s *GoogleChatServer) refuse(w http.ResponseWriter, status, msg string) {
	s.refusedFor(msg)
	googleError(w, http.StatusBadRequest, status, msg)
}

func googleError(w http.ResponseWriter, code int, status, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// readChatMessage checks a body with CheckChatMessage and the query of its
// request, and reads what it shows.
func readChatMessage(body []byte, q url.Values) (ChatMessage, error) {
	msg, err := CheckChatMessage(body)
	if err != nil {
		return ChatMessage{}, err
	}
	m := ChatMessage{ReplyOption: q.Get("messageReplyOption"), RequestID: q.Get("requestId"), Text: str(msg["text"])}
	if th, ok := msg["thread"].(map[string]any); ok {
		m.ThreadKey = str(th["threadKey"])
	}
	if k := q.Get("threadKey"); k != "" {
		m.ThreadKey = k
	}
	switch m.ReplyOption {
	case "", "MESSAGE_REPLY_OPTION_UNSPECIFIED":
		if m.ThreadKey != "" {
			return ChatMessage{}, errors.New("a thread key without messageReplyOption starts a new thread: Google ignores the key")
		}
	case "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD", "REPLY_MESSAGE_OR_FAIL":
	default:
		return ChatMessage{}, fmt.Errorf("invalid value at message_reply_option (%s)", m.ReplyOption)
	}
	for _, c := range list(msg["cardsV2"]) {
		card := c.(map[string]any)["card"].(map[string]any)
		if m.Card == nil {
			m.Card = card
			if h, ok := card["header"].(map[string]any); ok {
				m.Header = str(h["title"])
			}
			m.read(card)
		}
	}
	return m, nil
}

// read reads the widgets of card into m.
func (m *ChatMessage) read(card map[string]any) {
	for _, sec := range list(card["sections"]) {
		sec := sec.(map[string]any)
		if h := str(sec["header"]); h != "" {
			m.Texts = append(m.Texts, h)
		}
		for _, w := range list(sec["widgets"]) {
			w := w.(map[string]any)
			if p, ok := w["textParagraph"].(map[string]any); ok {
				m.Texts = append(m.Texts, str(p["text"]))
			}
			if d, ok := w["decoratedText"].(map[string]any); ok {
				m.Rows = append(m.Rows, [2]string{str(d["topLabel"]), str(d["text"])})
			}
			if b, ok := w["buttonList"].(map[string]any); ok {
				for _, btn := range list(b["buttons"]) {
					btn := btn.(map[string]any)
					link, _ := btn["onClick"].(map[string]any)["openLink"].(map[string]any)
					m.Buttons = append(m.Buttons, TeamsAction{Title: str(btn["text"]), URL: str(link["url"])})
				}
			}
		}
	}
}

// Widgets a card of CheckChatMessage may hold, each an object of one of these keys.
var chatWidgets = map[string]bool{"textParagraph": true, "decoratedText": true, "buttonList": true, "divider": true,
	"image": true, "columns": true, "grid": true, "chipList": true}

// CheckChatMessage checks the body of spaces.messages.create as a webhook
// sends it: a JSON object of only text, cardsV2, thread (and the few other
// fields of a Message a webhook may set), with text or a card; every card
// with a cardId and sections of widgets of known kinds, each widget one
// kind, a textParagraph and a decoratedText with a text, a button with a
// text and a link to open, a header with a title. It returns the message.
func CheckChatMessage(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var msg map[string]any
	if err := dec.Decode(&msg); err != nil || dec.More() {
		return nil, fmt.Errorf("invalid JSON payload received: %v", err)
	}
	for k := range msg {
		switch k {
		case "text", "cardsV2", "thread", "fallbackText", "accessoryWidgets", "formattedText":
		default:
			return nil, fmt.Errorf("invalid JSON payload received: unknown name %q: cannot find field", k)
		}
	}
	if _, ok := msg["text"].(string); !ok && msg["text"] != nil {
		return nil, errors.New("text must be a string")
	}
	if str(msg["text"]) == "" && len(list(msg["cardsV2"])) == 0 {
		return nil, errors.New("message cannot be empty: it needs text or cards")
	}
	if th, ok := msg["thread"]; ok {
		if th, ok := th.(map[string]any); !ok || str(th["threadKey"]) == "" && str(th["name"]) == "" {
			return nil, errors.New("thread needs a threadKey or a name")
		}
	}
	for i, c := range list(msg["cardsV2"]) {
		if err := checkChatCard(c); err != nil {
			return nil, fmt.Errorf("cardsV2[%d]: %w", i, err)
		}
	}
	return msg, nil
}

func checkChatCard(v any) error {
	c, ok := v.(map[string]any)
	if !ok || str(c["cardId"]) == "" {
		return errors.New("a card needs a cardId")
	}
	card, ok := c["card"].(map[string]any)
	if !ok {
		return errors.New("card must be an object")
	}
	if h, ok := card["header"]; ok {
		if h, ok := h.(map[string]any); !ok || str(h["title"]) == "" {
			return errors.New("card.header needs a title")
		}
	}
	sections := list(card["sections"])
	if len(sections) == 0 {
		return errors.New("card needs sections")
	}
	for i, sec := range sections {
		sec, ok := sec.(map[string]any)
		widgets := list(sec["widgets"])
		if !ok || len(widgets) == 0 {
			return fmt.Errorf("card.sections[%d] needs widgets", i)
		}
		for j, w := range widgets {
			if err := checkChatWidget(w); err != nil {
				return fmt.Errorf("card.sections[%d].widgets[%d]: %w", i, j, err)
			}
		}
	}
	return nil
}

func checkChatWidget(v any) error {
	w, ok := v.(map[string]any)
	if !ok || len(w) != 1 {
		return errors.New("a widget is an object of exactly one kind")
	}
	for kind, body := range w {
		if !chatWidgets[kind] {
			return fmt.Errorf("unknown widget %q", kind)
		}
		b, ok := body.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object", kind)
		}
		switch kind {
		case "textParagraph", "decoratedText":
			if _, ok := b["text"].(string); !ok {
				return fmt.Errorf("%s needs a text", kind)
			}
		case "buttonList":
			for i, btn := range list(b["buttons"]) {
				btn, _ := btn.(map[string]any)
				click, _ := btn["onClick"].(map[string]any)
				link, _ := click["openLink"].(map[string]any)
				if str(btn["text"]) == "" || !absolute(str(link["url"])) {
					return fmt.Errorf("buttons[%d] needs a text and an onClick.openLink.url", i)
				}
			}
		}
	}
	return nil
}
