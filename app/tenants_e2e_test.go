package app_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/webhook"
)

// stuckReceiver is a webhook receiver that never answers: it holds every
// post until the test ends, and counts them.
type stuckReceiver struct {
	*httptest.Server
	posts atomic.Int64
}

func newStuckReceiver(t *testing.T) *stuckReceiver {
	t.Helper()
	s := &stuckReceiver{}
	release := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // runs first: the held posts end
	return s
}

// refusingURL is a webhook URL at a loopback port that refuses connections.
func refusingURL(t *testing.T) string {
	t.Helper()
	return "http://" + channeltest.ClosedPort(t) + "/hook"
}

// TestOneOwnersFailingWebhooksHoldNobodyElses: one owner's subscription
// sends to four webhooks that refuse connections and four that hang; another
// owner's webhook delivery is accepted within 2 s of its send now, and again
// after the first owner deletes the subscription, without a restart.
func TestOneOwnersFailingWebhooksHoldNobodyElses(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	// Jane's subscription: four receivers that refuse, four that hang.
	var janeChannels []any
	var stuck []*stuckReceiver
	for range 4 {
		s := newStuckReceiver(t)
		stuck = append(stuck, s)
		for _, url := range []string{refusingURL(t), s.URL + "/hook"} {
			janeChannels = append(janeChannels, w.hook(t, w.jane, w.janeURI, url))
		}
	}
	janeSub := w.create(t, w.jane, w.subsBase, w.body(t, func(s map[string]any) {
		s["channels"] = janeChannels
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	}))
	// Bob, a member too, with a receiver that answers.
	bob, bobURI := w.member(t, "bob@example.com")
	good := newHookReceiver(t, "whsec-bob-0123456789", w.b.Clock.Now)
	bobSub := w.create(t, bob, "/svc/projects/"+w.pid+"/users/"+uid(bobURI)+"/subscriptions", w.body(t, func(s map[string]any) {
		s["channels"] = []any{w.hook(t, bob, bobURI, good.URL+"/hook")}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	}))

	wantStatus(t, w.jane.do("POST", janeSub+"/send", ""), 202)
	waitFor(t, func() bool { // every hanging receiver holds a post
		for _, s := range stuck {
			if s.posts.Load() == 0 {
				return false
			}
		}
		return true
	})
	for round, what := range []string{"beside the failing webhooks", "after their subscription was deleted"} {
		began := time.Now()
		wantStatus(t, bob.do("POST", bobSub+"/send", ""), 202)
		waitFor(t, func() bool {
			got, _ := good.payloads()
			return len(got) == round+1
		})
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("%s: the other owner's delivery was accepted after %v, want within 2s", what, took)
		}
		if round == 0 {
			wantStatus(t, w.jane.do("DELETE", janeSub, ""), 204)
			w.b.Clock.Advance(time.Minute) // send now may go again
		}
	}
	for i, s := range stuck {
		if n := s.posts.Load(); n > int64(webhook.DefaultSettings().PerDestination) {
			t.Errorf("hanging receiver %d got %d posts, want at most %d", i, n, webhook.DefaultSettings().PerDestination)
		}
	}
}

// hook creates a webhook channel of the user at url and returns its URI.
func (w *subWorld) hook(t *testing.T, user *browser, userURI, url string) string {
	t.Helper()
	r := user.do("POST", userURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"webhookConfiguration":`+
		`{"url":"`+url+`","secret":"whsec-bob-0123456789"}},"meta":{"title":"Hook"}}}`)
	wantStatus(t, r, 201)
	return r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
}

// create posts a subscription and returns its URI.
func (w *subWorld) create(t *testing.T, user *browser, base, body string) string {
	t.Helper()
	r := user.do("POST", base, body)
	wantStatus(t, r, 201)
	return r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
}

// member adds a user to the world's project as an editor and returns a
// browser signed in as the user, and the user's profile URI.
func (w *subWorld) member(t *testing.T, login string) (*browser, string) {
	t.Helper()
	_, uri := w.b.NewUser(t, login)
	wantStatus(t, w.admin.do("POST", "/svc/projects/"+w.pid+"/users",
		`{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/`+w.pid+`/roles/3"]},"links":{"self":"`+uri+`"}}}`), 200)
	br := newBrowser(t, w.b.URL, "ua")
	br.loginWithToken(login, "S3cret-pass")
	return br, uri
}

// TestPausingCallsOffHeldDeliveries: a delivery held for a receiver that
// refuses connections ends at once, failed with the reason, when its owner
// pauses the subscription, instead of waiting out delivery.maxWait.
func TestPausingCallsOffHeldDeliveries(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	channel := w.hook(t, w.jane, w.janeURI, refusingURL(t))
	body := func(enabled bool) string {
		return w.body(t, func(s map[string]any) {
			s["channels"] = []any{channel}
			s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
			s["enabled"] = enabled
			delete(s, "attachments")
		})
	}
	sub := w.create(t, w.jane, w.subsBase, body(true))
	wantStatus(t, w.jane.do("POST", sub+"/send", ""), 202)
	delivery := func() map[string]any {
		items := w.jane.do("GET", sub+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		if len(items) == 0 {
			return nil
		}
		ds := items[0].(map[string]any)["run"].(map[string]any)["deliveries"].([]any)
		if len(ds) == 0 {
			return nil
		}
		return ds[0].(map[string]any)
	}
	// Held: the sender found the receiver refusing and keeps the delivery,
	// charged nothing, for its next probe. Pending alone is true from the
	// handover on, before the sender has taken the message, which a pause
	// would then fail in the ledger, found so when it is claimed.
	waitFor(t, func() bool {
		return scrape(t, w.b.App.OpsURL())[`herald_worker_destinations_held{kind="webhook"}`] == 1
	})
	if d := delivery(); d == nil || d["lastError"] != nil || d["state"] != "pending" || d["attempts"] != 0.0 {
		t.Fatalf("delivery held for the receiver = %v, want pending, charged nothing", d)
	}
	wantStatus(t, w.jane.do("PUT", sub, body(false)), 200)
	waitFor(t, func() bool { return delivery()["state"] == "failed" })
	if d := delivery(); d["lastError"] != "called off: the subscription was paused" || d["attempts"] != 0.0 {
		t.Errorf("delivery after the pause = %v", d)
	}
	waitFor(t, func() bool { // the sender let it go, rather than hold it for the receiver
		return scrape(t, w.b.App.OpsURL())[`herald_worker_deliveries_total{kind="webhook",result="dropped"}`] == 1
	})
}

// TestAnUnwritableOutboxHoldsTheMail: with no SMTP relay, mail is written to
// <data>/outbox; a folder that cannot be written holds the deliveries,
// charged no attempt, while /readyz names it, and once the folder can be
// written again every held mail is written, each at its first attempt.
func TestAnUnwritableOutboxHoldsTheMail(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	outbox := filepath.Join(w.b.Config.Data, "outbox")
	if err := os.RemoveAll(outbox); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outbox, []byte("a file where the folder should be"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := w.create(t, w.jane, w.subsBase, w.body(t, func(s map[string]any) {
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		delete(s, "attachments")
	}))
	wantStatus(t, w.jane.do("POST", sub+"/send", ""), 202)
	var why string
	waitFor(t, func() bool {
		status, body := readyz(t, w.b.App.OpsURL())
		why, _ = body["checks"].(map[string]any)["providers"].(string)
		return status == http.StatusServiceUnavailable && strings.HasPrefix(why, "email: the provider takes nothing")
	})
	if !strings.Contains(why, "write email") {
		t.Errorf("/readyz does not say why: %s", why)
	}
	delivery := func() map[string]any {
		items := w.jane.do("GET", sub+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		return items[0].(map[string]any)["run"].(map[string]any)["deliveries"].([]any)[0].(map[string]any)
	}
	if d := delivery(); d["state"] != "pending" || d["attempts"] != 0.0 {
		t.Errorf("delivery while the outbox cannot be written: %v, want pending, charged nothing", d)
	}
	if err := os.Remove(outbox); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return delivery()["state"] == "sent" })
	if d := delivery(); d["attempts"] != 1.0 {
		t.Errorf("delivery = %v, want sent at the first attempt", d)
	}
	waitFor(t, func() bool { status, _ := readyz(t, w.b.App.OpsURL()); return status == http.StatusOK })
}
