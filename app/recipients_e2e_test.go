package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/channeltest"
)

// verifyWorld is a world with recipient verification on, example.com
// trusted, and a real SMTP server.
type verifyWorld struct {
	*subWorld
	smtp *channeltest.SMTPServer
}

func newVerifyWorld(t *testing.T) *verifyWorld {
	smtp := channeltest.NewSMTPServer(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
		c.PublicURL = publicURL
		c.Delivery.VerifyRecipients = true
		c.Delivery.TrustedDomains = []string{"example.com"}
		c.Delivery.MaxAttempts = 1
	})
	return &verifyWorld{subWorld: w, smtp: smtp}
}

// do is a request as jane, with a new temporary token first when the clock
// has moved past hers.
func (w *verifyWorld) do(t *testing.T, method, path, body string) reply {
	t.Helper()
	r := w.jane.do(method, path, body)
	if r.status == 401 {
		wantStatus(t, w.jane.do("GET", "/svc/account/token", ""), 200)
		r = w.jane.do(method, path, body)
	}
	return r
}

// mailChannel saves a channel of jane's to address (a POST, or a PUT of uri)
// and returns its URI and verification.
func (w *verifyWorld) mailChannel(t *testing.T, method, uri, address string) (string, string) {
	t.Helper()
	if uri == "" {
		uri = w.janeURI + "/channelConfigurations"
	}
	r := w.do(t, method, uri, `{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"`+address+`"}},"meta":{"title":"Mail"}}}`)
	if r.status != 201 && r.status != 200 {
		t.Fatalf("save %s: %d %s", address, r.status, r.body)
	}
	ch := r.json(t)["channelConfiguration"].(map[string]any)
	v, _ := ch["verification"].(string)
	return ch["meta"].(map[string]any)["uri"].(string), v
}

// verification reads a channel's verification.
func (w *verifyWorld) verification(t *testing.T, uri string) string {
	t.Helper()
	r := w.do(t, "GET", uri, "")
	wantStatus(t, r, 200)
	v, _ := r.json(t)["channelConfiguration"].(map[string]any)["verification"].(string)
	return v
}

// lastRun waits for the newest run of the subscription to be final and
// returns it.
func (w *verifyWorld) lastRun(t *testing.T, sub string, n int) map[string]any {
	t.Helper()
	var run map[string]any
	waitFor(t, func() bool {
		items := w.do(t, "GET", sub+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		if len(items) != n {
			return false
		}
		run = items[0].(map[string]any)["run"].(map[string]any)
		return run["state"] == "failed" || run["state"] == "delivered"
	})
	return run
}

var confirmLink = regexp.MustCompile(regexp.QuoteMeta(publicURL) + `/confirm/\S+`)

// TestRecipientMustConfirm: with delivery.verifyRecipients on, a channel to
// an address outside the trusted domains is unverified, and its recipient
// gets exactly one confirmation, whatever else is saved to that address;
// fires to it fail "recipient not verified" and send nothing, no report, and
// it may not be tested.
// The link's GET only asks; its POST accepts, for every channel of the owner
// to that address; the next fire delivers. A changed address needs a new
// confirmation; one may be sent again, not at once; a channel to a trusted
// domain needs none.
func TestRecipientMustConfirm(t *testing.T) {
	gate.Parallel(t)
	w := newVerifyWorld(t)
	if v := w.verification(t, w.channel); v != "verified" {
		t.Errorf("the channel to jane@example.com, a trusted domain: %q", v)
	}
	stranger, v := w.mailChannel(t, "POST", "", "stranger@example.net")
	if v != "unverified" {
		t.Fatalf("a new channel to a stranger is %q", v)
	}
	second, v := w.mailChannel(t, "POST", "", "Stranger@Example.NET")
	if v != "unverified" {
		t.Fatalf("a second channel to the same address is %q", v)
	}
	if r := w.do(t, "POST", stranger+"/test", ""); r.status != 409 || !strings.Contains(r.body, "has not accepted its messages yet") {
		t.Errorf("a test of the unverified channel: %d %s", r.status, r.body)
	}
	mails := w.smtp.Messages()
	if len(mails) != 1 {
		t.Fatalf("the relay got %d mails, want one confirmation", len(mails))
	}
	link := confirmLink.FindString(mails[0].Text)
	if mails[0].Subject != "Confirm that you want messages from Herald" || len(mails[0].RcptTo) != 1 ||
		mails[0].RcptTo[0] != "stranger@example.net" || link == "" || !strings.Contains(mails[0].Text, "jane@example.com asked") {
		t.Fatalf("confirmation: subject %q to %v, text %q", mails[0].Subject, mails[0].RcptTo, mails[0].Text)
	}

	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	r := w.do(t, "POST", w.subsBase, w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["channels"] = []any{stranger}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"CSV"}}}
	}))
	wantStatus(t, r, 201)
	sub := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	for fire := 1; fire <= 2; fire++ {
		w.b.Clock.Advance(5 * time.Minute)
		run := w.lastRun(t, sub, fire)
		d := run["deliveries"].([]any)[0].(map[string]any)
		if run["state"] != "failed" || d["state"] != "failed" || d["lastError"] != "recipient not verified" {
			t.Fatalf("fire %d: run %v, delivery %v", fire, run["state"], d)
		}
	}
	if n := len(w.smtp.Messages()); n != 1 {
		t.Fatalf("the relay got %d mails before the recipient confirmed, want the one confirmation", n)
	}

	path := follow(t, link)
	status, h, page := anonymous(t, w.b.URL, "GET", path, "")
	if status != 200 || !strings.Contains(string(page), "stranger@example.net") || !strings.Contains(string(page), "<form method=\"post\">") ||
		h.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET of the link: %d %s", status, page)
	}
	if v := w.verification(t, stranger); v != "unverified" {
		t.Fatalf("a GET of the link confirmed: %q", v)
	}
	status, _, page = anonymous(t, w.b.URL, "POST", path, "")
	if status != 200 || !strings.Contains(string(page), "Accepted") {
		t.Fatalf("POST of the link: %d %s", status, page)
	}
	if status, _, page = anonymous(t, w.b.URL, "POST", path, ""); status != 200 || !strings.Contains(string(page), "Already accepted") {
		t.Errorf("second POST of the link: %d %s", status, page)
	}
	for _, uri := range []string{stranger, second} {
		if v := w.verification(t, uri); v != "verified" {
			t.Errorf("%s after the link: %q", uri, v)
		}
	}
	w.b.Clock.Advance(5 * time.Minute)
	if run := w.lastRun(t, sub, 3); run["state"] != "delivered" {
		t.Fatalf("the fire after the link: %v", run)
	}
	mails = w.smtp.Messages()
	if len(mails) != 2 || mails[1].Subject != "Revenue alert" || mails[1].RcptTo[0] != "stranger@example.net" ||
		len(mails[1].Attachments) != 1 {
		t.Fatalf("after the link the relay has %d mails; the last %q to %v", len(mails), mails[len(mails)-1].Subject, mails[len(mails)-1].RcptTo)
	}

	// A changed address waits for its own confirmation, which may be sent again, not at once.
	if _, v := w.mailChannel(t, "PUT", second, "other@example.org"); v != "unverified" {
		t.Fatalf("the channel with a changed address is %q", v)
	}
	if mails = w.smtp.Messages(); len(mails) != 3 || mails[2].RcptTo[0] != "other@example.org" {
		t.Fatalf("the relay has %d mails, want a confirmation to the new address", len(mails))
	}
	r = w.do(t, "POST", second+"/confirmation", "")
	wantStatus(t, r, 200)
	if c := r.json(t)["channelConfirmation"].(map[string]any); c["accepted"] != true {
		t.Errorf("resend: %s", r.body)
	}
	if mails = w.smtp.Messages(); len(mails) != 4 || confirmLink.FindString(mails[3].Text) == "" {
		t.Fatalf("the relay has %d mails, want a second confirmation", len(mails))
	}
	r = w.do(t, "POST", second+"/confirmation", "")
	wantStatus(t, r, 429)
	if r.header.Get("Retry-After") != "900" {
		t.Errorf("Retry-After %q, want 900", r.header.Get("Retry-After"))
	}
	wantStatus(t, w.do(t, "POST", stranger+"/confirmation", ""), 409)
	wantStatus(t, w.do(t, "POST", w.channel+"/confirmation", ""), 409)
}

// TestConfirmationLinksAreSigned: a changed or foreign confirmation token
// is refused, and confirms nothing.
func TestConfirmationLinksAreSigned(t *testing.T) {
	gate.Parallel(t)
	w := newVerifyWorld(t)
	uri, _ := w.mailChannel(t, "POST", "", "stranger@example.net")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mails, err := w.smtp.Await(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := follow(t, confirmLink.FindString(mails[0].Text))
	for _, bad := range []string{path[:len(path)-2] + "AA", strings.Replace(path, "/confirm/", "/confirm/0", 1), "/confirm/x.y"} {
		if status, _, _ := anonymous(t, w.b.URL, "POST", bad, ""); status != 404 {
			t.Errorf("POST %s: %d, want 404", bad, status)
		}
	}
	if v := w.verification(t, uri); v != "unverified" {
		t.Errorf("after forged links: %q", v)
	}
}

// TestConsoleShowsVerification: the console marks a channel that waits for
// its recipient in the list and on its page, whose button sends the
// confirmation again; once accepted, the page says verified.
func TestConsoleShowsVerification(t *testing.T) {
	gate.Parallel(t)
	w := newVerifyWorld(t)
	uri, _ := w.mailChannel(t, "POST", "", "stranger@example.net")
	cid := uri[strings.LastIndex(uri, "/")+1:]
	c := newConsoleClient(t, w.b.URL)
	c.signIn("jane@example.com", "S3cret-pass")
	if _, page := c.get("/console/channels"); strings.Count(page, `class="badge warn"`) != 1 ||
		!strings.Contains(page, "unverified") {
		t.Fatalf("the list does not mark the one unverified channel:\n%s", page)
	}
	_, page := c.get("/console/channels/" + cid)
	if !strings.Contains(page, `action="/console/channels/`+cid+`/confirmation"`) || !strings.Contains(page, "Resend confirmation") ||
		!strings.Contains(page, "stranger@example.net accepts its messages") {
		t.Fatalf("the channel's page lacks the state or the button:\n%s", page)
	}
	// The answer is the channel's page with what the provider said: a notice
	// is never text in an address.
	resp, page := c.post("/console/channels/"+cid+"/confirmation", url.Values{"csrf": {c.csrf("/console/channels/" + cid)}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "A new confirmation message is on its way.") {
		t.Fatalf("resend: %d\n%s", resp.StatusCode, page)
	}
	mails := w.smtp.Messages()
	if len(mails) != 2 {
		t.Fatalf("the relay has %d mails, want the confirmation and the one sent again", len(mails))
	}
	if status, _, _ := anonymous(t, w.b.URL, "POST", follow(t, confirmLink.FindString(mails[1].Text)), ""); status != 200 {
		t.Fatalf("POST of the link: %d", status)
	}
	if _, page = c.get("/console/channels/" + cid); !strings.Contains(page, `<span class="badge ok">verified</span>`) ||
		strings.Contains(page, "Resend confirmation") {
		t.Fatalf("the page of the accepted channel:\n%s", page)
	}
}
