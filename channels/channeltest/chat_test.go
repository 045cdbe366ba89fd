package channeltest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels/channeltest"
)

func post(t *testing.T, u, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// card is a message of one Adaptive Card of version v with the given body
// elements and actions.
func card(v, body, actions string) string {
	return `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":` +
		`{"type":"AdaptiveCard","version":"` + v + `","body":[` + body + `],"actions":[` + actions + `]}}]}`
}

// TestTeamsServerChecksCards: the fake workflow takes a card Teams shows
// and refuses the shapes Teams does not: a wrong envelope, an element of a
// later version than the card's, an unknown element, a block without its
// text, an action without a URL, a body past 28 KB, a wrong signature.
func TestTeamsServerChecksCards(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTeamsServer(t)
	good := card("1.4", `{"type":"RichTextBlock","inlines":[{"type":"TextRun","text":"Revenue alert","weight":"Bolder"}]},`+
		`{"type":"FactSet","facts":[{"title":"m","value":"1"}]},`+
		`{"type":"ColumnSet","columns":[{"type":"Column","width":"stretch","items":[{"type":"TextBlock","text":"West"}]}]}`,
		`{"type":"Action.OpenUrl","title":"Open","url":"https://herald.example.com/f/x"}`)
	if status, body := post(t, srv.URL(), good); status != http.StatusAccepted {
		t.Fatalf("a good card: %d %s", status, body)
	}
	c := srv.Cards()[0]
	if len(c.Texts) != 1 || c.Texts[0] != "Revenue alert" || len(c.Rows) != 1 || c.Rows[0][0] != "West" || len(c.Actions) != 1 {
		t.Errorf("read %+v", c)
	}
	refusals := map[string]string{
		"not a message":      strings.Replace(good, `"type":"message"`, `"type":"note"`, 1),
		"no attachments":     `{"type":"message","attachments":[]}`,
		"wrong content type": strings.Replace(good, "card.adaptive", "card.hero", 1),
		"not a card":         strings.Replace(good, `"type":"AdaptiveCard"`, `"type":"HeroCard"`, 1),
		"no version":         strings.Replace(good, `"version":"1.4"`, `"version":"2"`, 1),
		"a table in 1.4":     card("1.4", `{"type":"Table","columns":[],"rows":[]}`, ""),
		"unknown element":    card("1.4", `{"type":"Markdown","text":"x"}`, ""),
		"text block no text": card("1.4", `{"type":"TextBlock"}`, ""),
		"inline not a run":   card("1.4", `{"type":"RichTextBlock","inlines":[{"type":"Image"}]}`, ""),
		"fact without value": card("1.4", `{"type":"FactSet","facts":[{"title":"m"}]}`, ""),
		"bad width":          card("1.4", `{"type":"ColumnSet","columns":[{"type":"Column","width":"wide","items":[]}]}`, ""),
		"bad weight":         card("1.4", `{"type":"TextBlock","text":"x","weight":"heavy"}`, ""),
		"relative link":      card("1.4", "", `{"type":"Action.OpenUrl","title":"Open","url":"/f/x"}`),
		"too big":            card("1.4", `{"type":"TextBlock","text":"`+strings.Repeat("x", channeltest.TeamsMaxBytes)+`"}`, ""),
	}
	for name, body := range refusals {
		if status, _ := post(t, srv.URL(), body); status < 400 {
			t.Errorf("%s: accepted (%d)", name, status)
		}
	}
	if status, _ := post(t, strings.Replace(srv.URL(), "sig=", "sig=x", 1), good); status != http.StatusUnauthorized {
		t.Errorf("a wrong signature: %d", status)
	}
	if n := len(srv.Cards()); n != 1 {
		t.Errorf("%d cards accepted, want 1", n)
	}
	if n := len(srv.Refused()); n != len(refusals) {
		t.Errorf("%d bodies refused, want %d: %q", n, len(refusals), srv.Refused())
	}
	if n, want := srv.Requests(), len(refusals)+2; n != want {
		t.Errorf("%d requests counted, want %d", n, want)
	}
}

// TestGoogleChatServerChecksMessages: the fake space takes a webhook's
// message and refuses what Google does: a wrong key or token, an unknown
// field, an empty message, a thread key without messageReplyOption, an
// unknown widget, a button without a link, a body past 32,000 bytes; a
// request id seen before answers the message it made.
func TestGoogleChatServerChecksMessages(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewGoogleChatServer(t)
	u, _ := url.Parse(srv.WebhookURL())
	at := func(extra string) string { return srv.URL() + u.Path + "?" + u.RawQuery + extra }
	good := `{"text":"Revenue alert","thread":{"threadKey":"k1"},"cardsV2":[{"cardId":"c","card":{"header":{"title":"T"},` +
		`"sections":[{"widgets":[{"decoratedText":{"topLabel":"West","text":"1"}},` +
		`{"buttonList":{"buttons":[{"text":"Open","onClick":{"openLink":{"url":"https://h.example.com/f"}}}]}}]}]}}]}`
	status, body := post(t, at("&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD&requestId=r1"), good)
	var first struct{ Name string }
	if status != 200 || json.Unmarshal([]byte(body), &first) != nil || first.Name == "" {
		t.Fatalf("a good message: %d %s", status, body)
	}
	_, body = post(t, at("&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD&requestId=r1"), good)
	if !strings.Contains(body, first.Name) || !srv.Messages()[1].Repeat {
		t.Errorf("a repeated request id made another message: %s", body)
	}
	refusals := map[string]struct{ query, body string }{
		"thread key without option": {"", good},
		"unknown option":            {"&messageReplyOption=SOMETIMES", good},
		"unknown field":             {"", `{"text":"x","color":"red"}`},
		"empty":                     {"", `{"text":""}`},
		"unknown widget":            {"", `{"cardsV2":[{"cardId":"c","card":{"sections":[{"widgets":[{"table":{}}]}]}}]}`},
		"two kinds in a widget":     {"", `{"cardsV2":[{"cardId":"c","card":{"sections":[{"widgets":[{"textParagraph":{"text":"a"},"divider":{}}]}]}}]}`},
		"button without a link":     {"", `{"cardsV2":[{"cardId":"c","card":{"sections":[{"widgets":[{"buttonList":{"buttons":[{"text":"Open"}]}}]}]}}]}`},
		"card without id":           {"", `{"cardsV2":[{"card":{"sections":[{"widgets":[{"divider":{}}]}]}}]}`},
		"too big":                   {"", `{"text":"` + strings.Repeat("x", channeltest.ChatMaxBytes) + `"}`},
	}
	for name, tc := range refusals {
		if status, _ := post(t, at(tc.query), tc.body); status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, status)
		}
	}
	if status, _ := post(t, strings.Replace(at(""), "token=", "token=x", 1), `{"text":"x"}`); status != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", status)
	}
	if status, _ := post(t, strings.Replace(at(""), "key=", "key=x", 1), `{"text":"x"}`); status != http.StatusBadRequest {
		t.Errorf("a wrong key: %d", status)
	}
	if n := len(srv.Refused()); n != len(refusals) {
		t.Errorf("%d requests refused, want %d: %q", n, len(refusals), srv.Refused())
	}
	if n, want := srv.Requests(), len(refusals)+4; n != want {
		t.Errorf("%d requests counted, want %d", n, want)
	}
}
