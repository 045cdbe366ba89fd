package app_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/slack"
	"github.com/heraldhq/herald/channels/slack/slacktest"
	"github.com/heraldhq/herald/channels/webhook"
)

// notifyWorld is a subscription world with a real SMTP server and a fake
// Slack workspace, data loaded, and a Slack channel of jane's.
type notifyWorld struct {
	*subWorld
	smtp  *channeltest.SMTPServer
	slack *slacktest.Server
	// slackChannel is the URI of jane's Slack channel.
	slackChannel string
}

func newNotifyWorld(t *testing.T) *notifyWorld {
	smtp := channeltest.NewSMTPServer(t)
	sl := slacktest.New(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
		c.Channels["slack"].(*slack.Settings).BaseURL = sl.URL()
		c.Delivery.MaxAttempts = 1
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"slackConfiguration":`+
		`{"channel":"`+sl.ChannelID()+`","token":"`+sl.Token()+`"}},"meta":{"title":"#alerts"}}}`)
	wantStatus(t, r, 201)
	if strings.Contains(r.body, sl.Token()) {
		t.Fatalf("the channel echoes its token: %s", r.body)
	}
	return &notifyWorld{subWorld: w, smtp: smtp, slack: sl,
		slackChannel: r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)}
}

// subscribe creates a subscription of jane's and returns its URI.
func (w *notifyWorld) subscribe(t *testing.T, change func(s map[string]any)) string {
	r := w.jane.do("POST", w.subsBase, w.body(t, change))
	wantStatus(t, r, 201)
	return r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
}

// get is a GET as jane, with a new temporary token first when the clock has
// moved past hers.
func (w *notifyWorld) get(t *testing.T, path string) map[string]any {
	r := w.jane.do("GET", path, "")
	if r.status == 401 {
		wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200)
		r = w.jane.do("GET", path, "")
	}
	return r.json(t)
}

// runs is the run history of a subscription, newest first.
func (w *notifyWorld) runs(t *testing.T, uri string) []map[string]any {
	items := w.get(t, uri+"/runs")["runs"].(map[string]any)["items"].([]any)
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = it.(map[string]any)["run"].(map[string]any)
	}
	return out
}

// TestSlackReceivesTextAndPDF: a subscription with a Slack channel and a PDF
// attachment fires; the workspace gets one message with the text and the file.
func TestSlackReceivesTextAndPDF(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	uri := w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["channels"] = []any{w.slackChannel}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"PDF"}}}
	})
	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool { return len(w.slack.Messages()) > 0 })
	msgs := w.slack.Messages()
	if len(msgs) != 1 || len(msgs[0].Files) != 1 {
		t.Fatalf("slack got %+v", msgs)
	}
	m, f := msgs[0], msgs[0].Files[0]
	if !strings.Contains(m.Text, "Revenue alert") || !strings.Contains(m.Text, "Revenue fell to 35.50") {
		t.Errorf("text = %q", m.Text)
	}
	if !strings.HasSuffix(f.Name, ".pdf") || !bytes.HasPrefix(f.Data, []byte("%PDF-")) || f.Size != int64(len(f.Data)) {
		t.Errorf("file %q of %d bytes starts %q", f.Name, f.Size, f.Data[:min(8, len(f.Data))])
	}
	waitFor(t, func() bool { runs := w.runs(t, uri); return len(runs) == 1 && runs[0]["state"] == "delivered" })
}

// TestSendNow: send now runs the subscription at once, whatever its schedule
// and condition say; the run is manual in the history and delivered; a second
// send within ten seconds is refused with Retry-After; another member may not.
func TestSendNow(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	uri := w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 0 8 1 1 *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.metricURI + "') lt 0"}}
		delete(s, "attachments")
	})
	r := w.jane.do("POST", uri+"/send", "")
	wantStatus(t, r, 202)
	runURI := r.json(t)["uri"].(string)
	if !strings.HasPrefix(runURI, uri+"/runs/") || r.header.Get("Location") != runURI {
		t.Fatalf("answer %v, Location %q", r.body, r.header.Get("Location"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mails, err := w.smtp.Await(ctx, 1)
	if err != nil {
		t.Fatalf("no mail: %v", err)
	}
	if !strings.Contains(mails[0].Text, "Revenue fell to 35.50") {
		t.Errorf("mail text %q", mails[0].Text)
	}
	var run map[string]any
	waitFor(t, func() bool {
		run = w.jane.do("GET", runURI, "").json(t)["run"].(map[string]any)
		return run["state"] == "delivered"
	})
	if run["trigger"] != "manual" || run["by"] != w.janeURI || run["condition"] != false {
		t.Errorf("run = %v", run)
	}
	w.b.Clock.Advance(2 * time.Second) // past the second of the first send: only the limit stands in the way
	r = w.jane.do("POST", uri+"/send", "")
	wantStatus(t, r, 429)
	if ra := r.header.Get("Retry-After"); ra != "8" {
		t.Errorf("Retry-After = %q, want 8", ra)
	}
	w.b.Clock.Advance(8 * time.Second)
	wantStatus(t, w.jane.do("POST", uri+"/send", ""), 202)
	other := newBrowser(t, w.b.URL, "ua")
	w.b.NewUser(t, "eve@example.com")
	other.loginWithToken("eve@example.com", "S3cret-pass")
	if r := other.do("POST", uri+"/send", ""); r.status != 403 && r.status != 404 {
		t.Errorf("a stranger's send now = %d %s", r.status, r.body)
	}
	if runs := w.runs(t, uri); len(runs) != 2 {
		t.Errorf("%d runs, want the two sends", len(runs))
	}
}

// TestBouncingMailMakesUnhealthy: a subscription whose mail is refused for
// good at every fire is unhealthy after three runs, and its owner is told on
// Slack, not by the mail that keeps bouncing.
func TestBouncingMailMakesUnhealthy(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	w.smtp.FailNext(1000, 550)
	uri := w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	})
	health := func() map[string]any {
		return w.get(t, uri)["subscription"].(map[string]any)["health"].(map[string]any)
	}
	for i := 1; i <= 3; i++ {
		w.b.Clock.Advance(5 * time.Minute)
		waitFor(t, func() bool {
			runs := w.runs(t, uri)
			return len(runs) == i && runs[0]["state"] == "failed" && health()["failuresInARow"] == float64(i)
		})
		if got := len(w.slack.Messages()); i < 3 && got != 0 {
			t.Fatalf("after %d runs slack got %d messages", i, got)
		}
	}
	if h := health(); h["healthy"] != false {
		t.Fatalf("health = %v", h)
	}
	waitFor(t, func() bool { return len(w.slack.Messages()) == 1 })
	if m := w.slack.Messages()[0]; !strings.Contains(m.Text, "is failing") || !strings.Contains(m.Text, "550") {
		t.Errorf("notice = %q", m.Text)
	}
	if n := len(w.smtp.Messages()); n != 0 {
		t.Errorf("the bouncing relay accepted %d mails", n)
	}
}

// TestResolvedMessage: an onChange subscription with a resolved message tells
// the channel once when the condition starts to hold and once when it stops.
func TestResolvedMessage(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	uri := w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["channels"] = []any{w.slackChannel}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.metricURI + "') gt 20"}}
		s["fireMode"] = "onChange"
		s["resolvedMessage"] = map[string]any{"template": map[string]any{"expression": "Back to ${f:executeMetric('" + w.metricURI + "')}"}}
		delete(s, "attachments")
	})
	fire := func(n int) {
		w.b.Clock.Advance(5 * time.Minute)
		waitFor(t, func() bool {
			runs := w.runs(t, uri)
			return len(runs) == n && runs[0]["state"] != "running" && runs[0]["state"] != "queued"
		})
	}
	fire(1) // 35.5 > 20: alert
	fire(2) // still: nothing
	wantStatus(t, w.admin.do("GET", "/svc/account/token", ""), 200)
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.sales", "full", "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n1,3,s1,2024-01-31\n"), 200)
	fire(3) // 3: resolved
	fire(4) // still: nothing
	msgs := w.slack.Messages()
	if len(msgs) != 2 || !strings.Contains(msgs[0].Text, "Revenue fell to 35.50") ||
		!strings.Contains(msgs[1].Text, "Resolved: Revenue alert") || !strings.Contains(msgs[1].Text, "Back to 3.00") {
		var texts []string
		for _, m := range msgs {
			texts = append(texts, m.Text)
		}
		t.Fatalf("slack got %q", texts)
	}
	runs := w.runs(t, uri)
	if runs[1]["resolved"] != true || runs[0]["state"] != "not_triggered" || runs[2]["state"] != "not_triggered" {
		t.Errorf("runs = %v", runs)
	}
	wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200)
	r := w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) {
		s["resolvedMessage"] = map[string]any{"template": map[string]any{"expression": "ok"}}
	}))
	wantStatus(t, r, 400)
	if !strings.Contains(r.body, "subscription.resolvedMessage.template.expression") {
		t.Errorf("error %s does not name the field", r.body)
	}
}

// TestOwnerWithoutAWorkingChannelIsToldAtTheLoginAddress: a subscription
// whose only channel, its owner's only one, fails for good at every fire: the
// notice that it is failing goes to the owner's login address through the
// relay, and after subscriptions.pauseAfterFailures failures in a row it
// pauses itself, with an event on the run and a second notice, and fires no
// more.
func TestOwnerWithoutAWorkingChannelIsToldAtTheLoginAddress(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "this hook was removed", http.StatusGone)
	}))
	t.Cleanup(gone.Close)
	hook := w.hook(t, w.jane, w.janeURI, gone.URL+"/hook")
	uri := w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["channels"] = []any{hook}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	})
	for _, other := range []string{w.channel, w.slackChannel} {
		wantStatus(t, w.jane.do("DELETE", other, ""), 204)
	}
	for i := 1; i <= 10; i++ {
		w.b.Clock.Advance(5 * time.Minute)
		waitFor(t, func() bool {
			runs := w.runs(t, uri)
			return len(runs) == i && runs[0]["state"] == "failed"
		})
	}
	waitFor(t, func() bool { return len(w.smtp.Messages()) == 2 })
	for i, want := range []string{"is failing", "is paused"} {
		m := w.smtp.Messages()[i]
		if !strings.Contains(m.Subject, want) || len(m.RcptTo) != 1 || m.RcptTo[0] != "jane@example.com" {
			t.Errorf("notice %d: %q to %v, want %q to jane's login address", i+1, m.Subject, m.RcptTo, want)
		}
	}
	sub := w.get(t, uri)["subscription"].(map[string]any)
	if sub["enabled"] != false {
		t.Errorf("after ten failures in a row the subscription is enabled: %v", sub["enabled"])
	}
	events, _ := w.runs(t, uri)[0]["events"].([]any)
	if len(events) != 1 || events[0].(map[string]any)["event"] != "paused" {
		t.Errorf("events of the tenth run = %v, want it paused", events)
	}
	w.b.Clock.Advance(time.Hour)
	if runs := w.runs(t, uri); len(runs) != 10 {
		t.Errorf("%d runs after the pause and an hour, want the 10", len(runs))
	}
}
