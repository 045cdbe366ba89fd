package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/channeltest"
)

// TestSubscriptionFiresAndMailIsDelivered goes the whole way: a subscription
// fires on the injected clock, the engine hands the message over, the worker
// sends it through JetStream to a real SMTP server, and the run history says
// so.
func TestSubscriptionFiresAndMailIsDelivered(t *testing.T) {
	smtp := channeltest.NewSMTPServer(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.SMTP.Host, c.SMTP.Port, c.SMTP.TLSPolicy, c.SMTP.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
	})
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["message"] = map[string]any{"template": map[string]any{"expression": "Weekly numbers: ${1 + 1} reports"}}
		s["subject"] = map[string]any{"template": map[string]any{"expression": "Herald test"}}
		delete(s, "attachments")
	})
	r := w.jane.do("POST", w.subsBase, body)
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)

	w.b.Clock.Advance(5 * time.Minute) // the clock starts on a whole hour: the first fire is due
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mails, err := smtp.Await(ctx, 1)
	if err != nil {
		t.Fatalf("no mail arrived: %v\n%s", err, w.b.Log.String())
	}
	m := mails[0]
	if m.Subject != "Herald test" || !strings.Contains(m.Text, "Weekly numbers: 2 reports") || m.To[0] != "jane@example.com" {
		t.Errorf("mail = %q %q to %v", m.Subject, m.Text, m.To)
	}
	if !strings.HasSuffix(m.MessageID, "@herald.test>") {
		t.Errorf("Message-ID = %q", m.MessageID)
	}

	// The run history shows the run delivered once the ledger has it.
	var run map[string]any
	waitFor(t, func() bool {
		items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		if len(items) != 1 {
			return false
		}
		run = items[0].(map[string]any)["run"].(map[string]any)
		return run["state"] == "delivered"
	})
	dels := run["deliveries"].([]any)
	d := dels[0].(map[string]any)
	if len(dels) != 1 || d["state"] != "sent" || d["attempts"].(float64) != 1 || d["providerId"] != m.MessageID {
		t.Errorf("deliveries = %v", dels)
	}
	if run["scheduledAt"] != "2026-03-02 09:05:00" || run["text"] != "Weekly numbers: 2 reports" {
		t.Errorf("run = %v", run)
	}
}
