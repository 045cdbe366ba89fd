package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/webhook"
)

// hookReceiver is a webhook endpoint as a user would write one: it verifies
// every request's signature and keeps what it accepted.
type hookReceiver struct {
	*httptest.Server
	secret string
	now    func() time.Time // the service's clock
	mu     sync.Mutex
	got    []webhook.Payload
	bad    []string
}

func newHookReceiver(t *testing.T, secret string, now func() time.Time) *hookReceiver {
	h := &hookReceiver{secret: secret, now: now}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := webhook.Verify(h.secret, r.Header, body, h.now(), 5*time.Minute); err != nil {
			h.bad = append(h.bad, err.Error())
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			h.bad = append(h.bad, err.Error())
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		h.got = append(h.got, p)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) payloads() ([]webhook.Payload, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhook.Payload(nil), h.got...), append([]string(nil), h.bad...)
}

// TestWebhookFiresSigned: a subscription with a webhook channel fires, and a
// receiver that verifies the signature accepts the run's JSON with the values
// the condition saw and the report attached inline; the run is delivered.
func TestWebhookFiresSigned(t *testing.T) {
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	hook := newHookReceiver(t, "whsec-e2e-0123456789", w.b.Clock.Now)
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
		`{"url":"`+hook.URL+`/herald","secret":"whsec-e2e-0123456789"}},"meta":{"title":"Ops hook"}}}`)
	wantStatus(t, r, 201)
	if strings.Contains(r.body, "whsec") {
		t.Fatalf("the channel echoes its secret: %s", r.body)
	}
	channel := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["channels"] = []any{channel}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + w.metricURI + "') ge 0"}}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"CSV"}}}
	})
	r = w.jane.do("POST", w.subsBase, body)
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool {
		got, bad := hook.payloads()
		return len(got)+len(bad) > 0
	})
	got, bad := hook.payloads()
	if len(bad) > 0 || len(got) != 1 {
		t.Fatalf("receiver got %d, refused %v", len(got), bad)
	}
	p := got[0]
	if p.Subscription != uri || p.Subject != "Revenue alert" || !strings.HasPrefix(p.Text, "Revenue fell to ") ||
		len(p.Values) != 1 || p.Values[w.metricURI] == nil || *p.Values[w.metricURI] != 35.5 || p.Run == "" || p.Instant.IsZero() {
		t.Errorf("payload = %+v", p)
	}
	if len(p.Attachments) != 1 || !strings.HasSuffix(p.Attachments[0].Name, ".csv") || len(p.Attachments[0].Content) == 0 {
		t.Errorf("attachments = %+v", p.Attachments)
	}
	waitFor(t, func() bool {
		items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["run"].(map[string]any)["state"] == "delivered"
	})
}

// TestWebhookRefusesInternalAddresses: without webhook.allowNetworks a webhook
// to 127.0.0.1 is refused with a 400 naming the URL field, and one to a name
// that resolves to a loopback address is accepted but refused at connect
// time: the delivery fails for good, and the receiver sees nothing.
func TestWebhookRefusesInternalAddresses(t *testing.T) {
	w := newSubWorld(t)
	hook := newHookReceiver(t, "s", w.b.Clock.Now)
	const path = "channelConfiguration.configuration.webhookConfiguration.url"
	for _, url := range []string{hook.URL + "/herald", "https://127.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/x"} {
		r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
			`{"url":"`+url+`","secret":"s"}},"meta":{"title":"Hook"}}}`)
		wantStatus(t, r, 400)
		if e := r.errorBody(t); !strings.Contains(e["parameters"].([]any)[0].(string), path) {
			t.Errorf("%s: error %v does not name %s", url, e, path)
		}
	}
	port := hook.URL[strings.LastIndex(hook.URL, ":")+1:]
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
		`{"url":"https://localhost:`+port+`/herald","secret":"s"}},"meta":{"title":"Hook"}}}`)
	wantStatus(t, r, 201)
	channel := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["channels"] = []any{channel}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	})
	r = w.jane.do("POST", w.subsBase, body)
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	w.b.Clock.Advance(5 * time.Minute)
	var d map[string]any
	waitFor(t, func() bool {
		items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		if len(items) != 1 {
			return false
		}
		run := items[0].(map[string]any)["run"].(map[string]any)
		dels := run["deliveries"].([]any)
		if len(dels) != 1 {
			return false
		}
		d = dels[0].(map[string]any)
		return run["state"] == "failed"
	})
	if d["state"] != "failed" || !strings.Contains(d["lastError"].(string), "localhost resolves to") ||
		!strings.Contains(d["lastError"].(string), "loopback") {
		t.Errorf("delivery = %v", d)
	}
	if got, bad := hook.payloads(); len(got)+len(bad) != 0 {
		t.Errorf("the receiver was reached: %v %v", got, bad)
	}
}
