package channeltest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
)

// TeamsServer speaks the trigger of a Teams workflow ("When a Teams webhook
// request is received") over HTTP on 127.0.0.1: POST
// /workflows/{id}/triggers/manual/paths/invoke with the workflow's signature
// in the query. It checks the signature, refuses a body past Teams' 28 KB
// and checks that the body is a message with an Adaptive Card in the
// structure Teams requires (see CheckTeamsMessage), answering 202 Accepted
// as the workflow does.
type TeamsServer struct {
	srv      *httptest.Server
	workflow string
	sig      string

	cards inbox[TeamsCard]

	tally
	HTTPGate
}

// TeamsCard is one card a TeamsServer accepted, with what it shows read out.
type TeamsCard struct {
	RunID          string
	Card           map[string]any // the Adaptive Card, as JSON decodes it
	Texts          []string       // the texts of its text blocks, in order
	Facts          [][2]string    // its facts, title and value
	Rows           [][]string     // its column sets, each a row of cell texts
	Actions        []TeamsAction  // its actions
	IdempotencyKey string         // the request's Idempotency-Key header
}

// TeamsAction is an Action.OpenUrl of a card.
type TeamsAction struct{ Title, URL string }

// TeamsMaxBytes is the largest body a TeamsServer takes, as Teams does.
const TeamsMaxBytes = 28 << 10

// NewTeamsServer starts a Teams workflow trigger with a fresh workflow id
// and signature, and closes it when the test ends.
func NewTeamsServer(t testing.TB) *TeamsServer {
	t.Helper()
	s := &TeamsServer{workflow: randomHex(16), sig: randomHex(20)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /workflows/{id}/triggers/manual/paths/invoke", s.invoke)
	s.srv = StartHTTP(t, &s.HTTPGate, mux)
	return s
}

// URL is the workflow's URL, signature included: the channel's secret.
func (s *TeamsServer) URL() string {
	q := url.Values{"api-version": {"2016-06-01"}, "sp": {"/triggers/manual/run"}, "sv": {"1.0"}, "sig": {s.sig}}
	return s.srv.URL + "/workflows/" + s.workflow + "/triggers/manual/paths/invoke?" + q.Encode()
}

// Host is the host of URL, as the channel's configuration shows it.
func (s *TeamsServer) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// Channel is a Teams channel of the workflow, as the kind keeps it.
func (s *TeamsServer) Channel() channels.Channel {
	return channels.Channel{ID: "teams-peer", Kind: "teams", Config: config(map[string]string{"host": s.Host()}), Secret: s.URL()}
}

// Cards returns the cards accepted so far, oldest first.
func (s *TeamsServer) Cards() []TeamsCard { return s.cards.all() }

// Await blocks until at least n cards were accepted, then returns them all,
// or returns ctx's error.
func (s *TeamsServer) Await(ctx context.Context, n int) ([]TeamsCard, error) {
	return s.cards.await(ctx, n, "Teams cards")
}

// Deliveries is Cards reduced to what every kind has: the subject is the
// card's first text, the text all of them.
func (s *TeamsServer) Deliveries() []Delivery {
	var ds []Delivery
	for _, c := range s.Cards() {
		d := Delivery{Key: c.IdempotencyKey, Text: strings.Join(c.Texts, "\n")}
		if len(c.Texts) > 0 {
			d.Subject = c.Texts[0]
		}
		ds = append(ds, d)
	}
	return ds
}

// Fail answers the next n requests with 429 and Retry-After: 1 (Transient)
// or 400 (Permanent).
func (s *TeamsServer) Fail(n int, f Failure) { s.fail(n, f) }

func (s *TeamsServer) invoke(w http.ResponseWriter, r *http.Request) {
	s.arrived()
	if r.PathValue("id") != s.workflow || r.URL.Query().Get("sig") != s.sig || r.URL.Query().Get("api-version") == "" {
		logicError(w, http.StatusUnauthorized, "DirectApiAuthorizationRequired", "The request must be authenticated by the workflow's signature.")
		return
	}
	if s.failScripted(w) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, TeamsMaxBytes+1))
	switch {
	case err != nil:
		logicError(w, http.StatusBadRequest, "InvalidRequestContent", err.Error())
		return
	case len(body) > TeamsMaxBytes:
		s.refuse(w, http.StatusRequestEntityTooLarge, "MessageTooLarge", fmt.Sprintf("the body passes %d bytes", TeamsMaxBytes))
		return
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		s.refuse(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "the body must be application/json")
		return
	}
	c, err := readTeamsMessage(body)
	if err != nil {
		s.refuse(w, http.StatusBadRequest, "InvalidTemplate", err.Error())
		return
	}
	c.IdempotencyKey = r.Header.Get("Idempotency-Key")
	c = s.cards.add(func(n int) TeamsCard {
		c.RunID = fmt.Sprintf("08584%015dCU%02d", n, n%100)
		return c
	})
	w.Header().Set("x-ms-workflow-run-id", c.RunID)
	w.WriteHeader(http.StatusAccepted)
}

// failScripted answers a request the server was told to fail.
func (s *TeamsServer) failScripted(w http.ResponseWriter) bool {
	f, ok := s.scripted()
	if !ok {
		return false
	}
	if f == Permanent {
		logicError(w, http.StatusBadRequest, "WorkflowTriggerIsNotEnabled", "The workflow is disabled.")
	} else {
		w.Header().Set("Retry-After", "1")
		logicError(w, http.StatusTooManyRequests, "WorkflowRequestsThrottled", "Too many requests.")
	}
	return true
}

func (s *TeamsServer) refuse(w http.ResponseWriter, status int, code, msg string) {
	s.refusedFor(msg)
	logicError(w, status, code, msg)
}

func logicError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// readTeamsMessage checks a body with CheckTeamsMessage and reads what its
// card shows.
func readTeamsMessage(body []byte) (TeamsCard, error) {
	card, err := CheckTeamsMessage(body)
	if err != nil {
		return TeamsCard{}, err
	}
	c := TeamsCard{Card: card}
	c.read(card["body"])
	for _, a := range list(card["actions"]) {
		a := a.(map[string]any)
		if a["type"] == "Action.OpenUrl" {
			c.Actions = append(c.Actions, TeamsAction{Title: str(a["title"]), URL: str(a["url"])})
		}
	}
	return c, nil
}

// read reads the elements of items into c.
func (c *TeamsCard) read(items any) {
	for _, e := range list(items) {
		e := e.(map[string]any)
		switch e["type"] {
		case "TextBlock", "RichTextBlock":
			c.Texts = append(c.Texts, blockText(e))
		case "FactSet":
			for _, f := range list(e["facts"]) {
				f := f.(map[string]any)
				c.Facts = append(c.Facts, [2]string{str(f["title"]), str(f["value"])})
			}
		case "ColumnSet":
			var row []string
			for _, col := range list(e["columns"]) {
				var cell []string
				for _, it := range list(col.(map[string]any)["items"]) {
					cell = append(cell, blockText(it.(map[string]any)))
				}
				row = append(row, strings.Join(cell, " "))
			}
			c.Rows = append(c.Rows, row)
		case "Container":
			c.read(e["items"])
		}
	}
}

// blockText is the text of a TextBlock or a RichTextBlock.
func blockText(e map[string]any) string {
	if e["type"] == "TextBlock" {
		return str(e["text"])
	}
	var b strings.Builder
	for _, in := range list(e["inlines"]) {
		switch v := in.(type) {
		case string:
			b.WriteString(v)
		case map[string]any:
			b.WriteString(str(v["text"]))
		}
	}
	return strings.TrimSpace(strings.ReplaceAll(b.String(), "\u00a0", " "))
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
