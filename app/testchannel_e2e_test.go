package app_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/webhook"
)

// channelTest is the channelTest object of a test's answer.
func channelTest(t *testing.T, r reply) map[string]any {
	t.Helper()
	wantStatus(t, r, 200)
	out, ok := r.json(t)["channelTest"].(map[string]any)
	if !ok {
		t.Fatalf("no channelTest in %s", r.body)
	}
	return out
}

// TestChannelTestMessage: jane tests her e-mail channel; the answer says the
// relay accepted it with its Message-ID, and the relay got exactly that mail.
// A second test at once, of that channel or another of hers, is 429 with
// Retry-After; a channel whose relay refuses answers accepted:false with the
// error; another user gets 404; her Slack channel, with its token, is tested
// through the same sender too.
func TestChannelTestMessage(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	r := w.jane.do("POST", w.channel+"/test", "")
	ct := channelTest(t, r)
	id, _ := ct["providerId"].(string)
	if ct["accepted"] != true || id == "" || len(ct) != 2 {
		t.Fatalf("answer %s", r.body)
	}
	mails := w.smtp.Messages()
	if len(mails) != 1 {
		t.Fatalf("the relay got %d mails, want 1", len(mails))
	}
	m := mails[0]
	if m.Subject != "Test message from Herald" || m.MessageID != id ||
		len(m.To) != 1 || m.To[0] != "jane@example.com" || len(m.RcptTo) != 1 || m.RcptTo[0] != "jane@example.com" {
		t.Errorf("mail subject %q, Message-ID %q (answer %q), to %v, rcpt %v", m.Subject, m.MessageID, id, m.To, m.RcptTo)
	}
	if !strings.Contains(m.Text, "jane@example.com asked for") || !strings.Contains(m.Text, "“Mail”") ||
		!strings.Contains(m.Text, "Nothing needs doing.") || len(m.Attachments) != 0 {
		t.Errorf("mail text %q, %d attachments", m.Text, len(m.Attachments))
	}

	r = w.jane.do("POST", w.channel+"/test", "")
	wantStatus(t, r, 429)
	if r.header.Get("Retry-After") != "10" {
		t.Errorf("Retry-After %q, want 10", r.header.Get("Retry-After"))
	}

	r = w.jane.do("POST", w.janeURI+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"nobody@example.com"}},"meta":{"title":"Nobody"}}}`)
	wantStatus(t, r, 201)
	refused := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	w.smtp.FailNext(1, 550)
	r = w.jane.do("POST", refused+"/test", "")
	wantStatus(t, r, 429) // subscriptions.testEvery holds per owner, not per channel
	w.b.Clock.Advance(10 * time.Second)
	r = w.jane.do("POST", refused+"/test", "")
	ct = channelTest(t, r)
	msg, _ := ct["error"].(string)
	if ct["accepted"] != false || ct["permanent"] != true || !strings.Contains(msg, "550") || ct["providerId"] != nil {
		t.Errorf("refused answer %s", r.body)
	}
	if n := len(w.smtp.Messages()); n != 1 {
		t.Errorf("the relay has %d mails, want still 1", n)
	}

	joe := newBrowser(t, w.b.URL, "ua")
	w.b.NewUser(t, "joe@example.com")
	joe.loginWithToken("joe@example.com", "S3cret-pass")
	r = joe.do("POST", w.channel+"/test", "")
	wantStatus(t, r, 404)
	_, joeURI := w.b.NewUser(t, "joe2@example.com")
	cid := w.channel[strings.LastIndex(w.channel, "/")+1:]
	wantStatus(t, w.jane.do("POST", joeURI+"/channelConfigurations/"+cid+"/test", ""), 404)
	wantStatus(t, w.jane.do("POST", w.janeURI+"/channelConfigurations/000000000000000000000000/test", ""), 404)

	w.b.Clock.Advance(10 * time.Second)
	r = w.jane.do("POST", w.slackChannel+"/test", "")
	ct = channelTest(t, r)
	if ct["accepted"] != true || strings.Contains(r.body, w.slack.Token()) {
		t.Fatalf("slack answer %s", r.body)
	}
	if msgs := w.slack.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Nothing needs doing.") {
		t.Errorf("slack got %+v", msgs)
	}
}

// TestChannelTestAnswersAlikeWhateverListens: the test button is no port
// scanner. Webhook channels at a closed loopback port, at a port that
// closes the connection after reading the request, at one that answers
// garbage and at one that speaks plain text to TLS each answer the same
// bytes, ids and times aside: accepted false, "could not reach the
// receiver", and nothing of what the port said.
func TestChannelTestAnswersAlikeWhateverListens(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	urls := map[string]string{
		"closed port":          "http://" + channeltest.ClosedPort(t) + "/hook",
		"closes after reading": "http://" + channeltest.Speaker(t, nil) + "/hook",
		"answers garbage":      "http://" + channeltest.Speaker(t, []byte("SSH-2.0-OpenSSH_9.6\r\nProtocol mismatch.\r\n")) + "/hook",
		"plain text to TLS":    "https://" + channeltest.Speaker(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")) + "/hook",
	}
	ids := regexp.MustCompile(`[0-9a-f]{24}|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	var first, firstName string
	for name, url := range urls {
		r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
			`{"url":"`+url+`","secret":"whsec-scan"}},"meta":{"title":"Hook"}}}`)
		wantStatus(t, r, 201)
		channel := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
		w.b.Clock.Advance(10 * time.Second) // subscriptions.testEvery
		r = w.jane.do("POST", channel+"/test", "")
		wantStatus(t, r, 200)
		body := ids.ReplaceAllString(r.body, "…")
		if body != `{"channelTest":{"accepted":false,"error":"could not reach the receiver","permanent":false}}` {
			t.Errorf("%s: answer %s", name, r.body)
		}
		if first == "" {
			first, firstName = body, name
		} else if body != first {
			t.Errorf("%s answers %s, %s answered %s", name, body, firstName, first)
		}
	}
}

// TestChannelTestQuotesNoBody: a receiver that refuses a test message is
// answered with its status, never with what its body says.
func TestChannelTestQuotesNoBody(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		http.Error(rw, "<title>Jenkins</title> internal build server, version 2.401", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
		`{"url":"`+srv.URL+`/hook","secret":"whsec-body"}},"meta":{"title":"Hook"}}}`)
	wantStatus(t, r, 201)
	channel := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	ct := channelTest(t, w.jane.do("POST", channel+"/test", ""))
	msg, _ := ct["error"].(string)
	if ct["accepted"] != false || ct["permanent"] != true || !strings.HasSuffix(msg, "answered 404 Not Found") ||
		strings.Contains(msg, "Jenkins") {
		t.Errorf("answer %v", ct)
	}
}
