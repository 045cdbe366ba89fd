package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
	gate.Parallel(t)
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
// time: the delivery fails for good, saying no more than that the receiver
// could not be reached, and the receiver sees nothing.
func TestWebhookRefusesInternalAddresses(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).Resolver = staticResolver{"hooks.example.test": "127.0.0.1"}
	})
	hook := newHookReceiver(t, "s", w.b.Clock.Now)
	const path = "channelConfiguration.configuration.webhookConfiguration.url"
	for _, url := range []string{hook.URL + "/herald", "https://127.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/x",
		"https://localhost/hook"} {
		r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
			`{"url":"`+url+`","secret":"s"}},"meta":{"title":"Hook"}}}`)
		wantStatus(t, r, 400)
		if e := r.errorBody(t); !strings.Contains(e["parameters"].([]any)[0].(string), path) {
			t.Errorf("%s: error %v does not name %s", url, e, path)
		}
	}
	port := hook.URL[strings.LastIndex(hook.URL, ":")+1:]
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
		`{"url":"https://hooks.example.test:`+port+`/herald","secret":"s"}},"meta":{"title":"Hook"}}}`)
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
	if d["state"] != "failed" || d["lastError"] != "could not reach the receiver" || d["attempts"] != 1.0 {
		t.Errorf("delivery = %v", d)
	}
	if got, bad := hook.payloads(); len(got)+len(bad) != 0 {
		t.Errorf("the receiver was reached: %v %v", got, bad)
	}
}

// staticResolver answers each name with one address, as DNS under someone
// else's control might.
type staticResolver map[string]string

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestWebhookRefusesEverySpecialPurposeAddress: a webhook at an address of
// any range of IANA's special-purpose registries that is not globally
// reachable, or at an IPv6 form of such an IPv4 address, is refused at save
// with a 400 naming the URL field; nothing is dialled. Public addresses and
// their IPv6 forms are kept.
func TestWebhookRefusesEverySpecialPurposeAddress(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	const path = "channelConfiguration.configuration.webhookConfiguration.url"
	save := func(addr string) reply {
		host := addr
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
			`{"url":"https://`+host+`/hook","secret":"s"}},"meta":{"title":"Hook"}}}`)
	}
	for _, addr := range []string{
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "127.0.0.1", "169.254.169.254", "172.16.0.1", "192.0.0.1",
		"192.0.0.170", "192.0.2.1", "192.88.99.1", "192.168.0.1", "198.18.0.1", "198.19.255.255", "198.51.100.1",
		"203.0.113.1", "224.0.0.1", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "::ffff:0:7f00:1", "64:ff9b::7f00:1", "64:ff9b:1::a00:1",
		"100::1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:2::1", "2001:db8::1", "2002:7f00:1::", "3fff::1",
		"fc00::1", "fd00:ec2::254", "fe80::1", "ff02::1",
	} {
		r := save(addr)
		if r.status != 400 {
			t.Errorf("%s: status %d, want 400: %s", addr, r.status, r.body)
			continue
		}
		if e := r.errorBody(t); !strings.Contains(e["parameters"].([]any)[0].(string), path) ||
			!strings.Contains(fmt.Sprint(e["message"]), "refused unless webhook.allowNetworks admits it") {
			t.Errorf("%s: error %v does not name %s and the refusal", addr, e, path)
		}
	}
	for _, addr := range []string{"8.8.8.8", "2001:4860:4860::8888", "64:ff9b::808:808", "2002:808:808::1",
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7"} {
		wantStatus(t, save(addr), 201)
	}
}

// TestWebhookTemplate: a webhook channel's body template whose result is not
// JSON is refused at save with a 400 on its field naming the line and
// column; a template that is JSON is kept, and a fire posts what it renders:
// the subject quoted and escaped, the metric's value as a raw number, the
// subscription's URI, signed as any other request.
func TestWebhookTemplate(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	var mu sync.Mutex
	var bodies [][]byte
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		defer mu.Unlock()
		if err := webhook.Verify("whsec-tpl", r.Header, body, w.b.Clock.Now(), 5*time.Minute); err != nil {
			bad = append(bad, err.Error())
		}
		bodies = append(bodies, body)
	}))
	t.Cleanup(srv.Close)
	save := func(tpl string) reply {
		return w.jane.do("POST", w.janeURI+"/channelConfigurations", jsonString(map[string]any{"channelConfiguration": map[string]any{
			"configuration": map[string]any{"webhookConfiguration": map[string]any{"url": srv.URL + "/hook", "secret": "whsec-tpl", "template": tpl}},
			"meta":          map[string]any{"title": "Chat"}}}))
	}
	r := save("{\n  \"text\": \"${subject}\",\n  \"title\": \"\"${subscription.title}\"\"\n}")
	wantStatus(t, r, 400)
	e := r.errorBody(t)
	if e["parameters"].([]any)[0] != "channelConfiguration.configuration.webhookConfiguration.template" ||
		!strings.Contains(fmt.Sprint(e["message"]), "line 3, column 14: the result is not JSON") {
		t.Errorf("error = %v", e)
	}
	metric := "${f:executeMetric('" + w.metricURI + "')}"
	tpl := `{"text": "#### ${subject}", "value": ` + metric + `, "summary": ${subject + ': ' + text}, "uri": ${subscription.uri}}`
	r = save(tpl)
	wantStatus(t, r, 201)
	ch := r.json(t)["channelConfiguration"].(map[string]any)
	if got := ch["configuration"].(map[string]any)["webhookConfiguration"].(map[string]any)["template"]; got != tpl {
		t.Errorf("the channel shows template %q", got)
	}
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	r = w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["channels"] = []any{ch["meta"].(map[string]any)["uri"]}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["subject"] = map[string]any{"template": map[string]any{"expression": `Revenue "alert"`}}
		delete(s, "attachments")
	}))
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(bodies) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	want := `{"text": "#### Revenue \"alert\"", "value": 35.5, "summary": "Revenue \"alert\": Revenue fell to 35.50", "uri": "` + uri + `"}`
	if len(bad) > 0 || string(bodies[0]) != want {
		t.Errorf("the receiver got %s (%v)\nwant %s", bodies[0], bad, want)
	}
}
