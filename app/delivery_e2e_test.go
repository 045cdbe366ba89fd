package app_test

import (
	"context"
	"fmt"
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
	gate.Parallel(t)
	smtp := channeltest.NewSMTPServer(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
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

// TestBurstAfterTheRelayDroppedThePool fires a burst, lets the relay drop every pooled
// connection, as relays and firewalls do with quiet ones, and fires again: every
// delivery of the second burst is sent at its first attempt.
func TestBurstAfterTheRelayDroppedThePool(t *testing.T) {
	gate.Parallel(t)
	smtp := channeltest.NewSMTPServer(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
	})
	var uris []string
	for i := range 12 {
		body := w.body(t, func(s map[string]any) {
			s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
			s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
			s["meta"] = map[string]any{"title": fmt.Sprint("Burst ", i)}
			delete(s, "attachments")
		})
		r := w.jane.do("POST", w.subsBase, body)
		wantStatus(t, r, 201)
		uris = append(uris, r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.b.Clock.Advance(5 * time.Minute)
	if _, err := smtp.Await(ctx, 12); err != nil {
		t.Fatal(err)
	}
	smtp.DropConnections()
	w.b.Clock.Advance(5 * time.Minute)
	if _, err := smtp.Await(ctx, 24); err != nil {
		t.Fatalf("second burst: %v\n%s", err, w.b.Log.String())
	}
	wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200) // ten minutes passed: a new temporary token
	for _, uri := range uris {
		waitFor(t, func() bool {
			items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
			if len(items) != 2 {
				return false
			}
			run := items[0].(map[string]any)["run"].(map[string]any)
			return run["state"] == "delivered"
		})
		items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		for _, it := range items {
			d := it.(map[string]any)["run"].(map[string]any)["deliveries"].([]any)[0].(map[string]any)
			if d["attempts"].(float64) != 1 {
				t.Errorf("%s: delivery %v took %v attempts", uri, d["id"], d["attempts"])
			}
		}
	}
}

// TestRelayOutageHoldsDeliveries fires 200 deliveries while the relay refuses every
// connection, keeps it away while the probes fail, and brings it back: every mail is
// accepted within 10 s, each delivery sent at its first attempt, none failed.
func TestRelayOutageHoldsDeliveries(t *testing.T) {
	gate.Parallel(t)
	smtp := channeltest.NewSMTPServer(t)
	relay := channeltest.NewTCPProxy(t, smtp.Addr())
	w := newSubWorldWith(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = "127.0.0.1", relay.Port(), "none", "alerts@herald.test"
		c.Delivery.ProbeInterval, c.Delivery.ProbeIntervalMax = 50*time.Millisecond, 200*time.Millisecond
	})
	chans := []any{}
	for i := range 10 {
		r := w.jane.do("POST", w.janeURI+"/channelConfigurations", fmt.Sprintf(
			`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"team%d@example.com"}},"meta":{"title":"T%d"}}}`, i, i))
		wantStatus(t, r, 201)
		chans = append(chans, r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string))
	}
	var uris []string
	for i := range 20 {
		r := w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) {
			s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
			s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
			s["channels"] = chans
			s["meta"] = map[string]any{"title": fmt.Sprint("Outage ", i)}
			delete(s, "attachments")
		}))
		wantStatus(t, r, 201)
		uris = append(uris, r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string))
	}

	relay.Down()
	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool {
		m := scrape(t, w.b.App.OpsURL())
		return m[`herald_worker_provider_unreachable{kind="email"}`] == 1 && m[`herald_worker_send_attempts_total{kind="email",result="error"}`] >= 5
	})
	relay.Up(t)
	back := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := smtp.Await(ctx, 200); err != nil {
		t.Fatalf("%d of 200 mails within 10 s of the relay's return: %v", len(smtp.Messages()), err)
	}
	t.Logf("200 mails accepted %s after the relay came back", time.Since(back).Round(time.Millisecond))
	wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200)
	for _, uri := range uris {
		var run map[string]any
		waitFor(t, func() bool {
			items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
			run = items[0].(map[string]any)["run"].(map[string]any)
			return run["state"] == "delivered"
		})
		for _, d := range run["deliveries"].([]any) {
			if d := d.(map[string]any); d["attempts"].(float64) != 1 || d["state"] != "sent" {
				t.Errorf("delivery %v: %v after %v attempts", d["id"], d["state"], d["attempts"])
			}
		}
	}
}
