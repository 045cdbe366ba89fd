package app_test

import (
	"encoding/base64"
	"path/filepath"

	"bytes"
	"context"
	"github.com/chromedp/chromedp"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/numfmt"
	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/sms"
)

// publicURL is where the tests' services say people reach them. Links are
// built on it; the tests follow them on the service's real address.
const publicURL = "https://herald.test"

// follow turns a link of a message into a request path of the service.
func follow(t *testing.T, link string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(link, publicURL)
	if !ok || !strings.HasPrefix(rest, "/") {
		t.Fatalf("link %q is not under %s", link, publicURL)
	}
	return rest
}

// anonymous is a request without any login.
func anonymous(t *testing.T, base, method, path, form string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body.Bytes()
}

var cidRef = regexp.MustCompile(`<img src="cid:([^"]+)"`)

// TestReportMailInlineAndUnsubscribe: the demo's subscription mails its chart
// report. The mail has a text part, an HTML part with the report's table
// (region names, numbers in the metric's format) and its chart as an inline
// image, the PDF, and one-click unsubscribe headers. A POST to the unsubscribe
// link pauses the subscription for that channel: the history says who, and
// the next fire sends nothing; listing the channel again in a PUT resumes it,
// and the link of the mail before no longer pauses it.
func TestReportMailInlineAndUnsubscribe(t *testing.T) {
	gate.Parallel(t)
	b, smtp, m := demoMail(t)
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	pid := demoProject.FindStringSubmatch(b.Stdout.String())[1]
	subs := admin.do("GET", "/svc/projects/"+pid+"/users/"+uid(b.AdminProfile)+"/subscriptions", "").json(t)
	sub := subs["subscriptions"].(map[string]any)["items"].([]any)[0].(map[string]any)["subscription"].(map[string]any)
	subURI := sub["meta"].(map[string]any)["uri"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The text part is kept, with the footer's link.
	if !strings.Contains(m.Text, "Revenue so far") || !strings.Contains(m.Text, "Unsubscribe: "+publicURL+"/unsubscribe/") {
		t.Errorf("text part = %q", m.Text)
	}
	// The footer links to the subscription's page in the console.
	if !strings.Contains(m.HTML, `href="`+publicURL+`/console/projects/`) || !strings.Contains(m.HTML, ">Open the subscription</a>") {
		t.Errorf("the footer does not link to the console")
	}
	// The HTML part: the report's table, each region with its revenue as the metric formats it.
	_, byRegion := demoRevenue(t)
	if !strings.Contains(m.HTML, "Revenue by region") {
		t.Errorf("HTML has no report title")
	}
	regions := demoRegions(t)
	for id, revenue := range byRegion {
		region := regions[id]
		cell := ">" + numfmt.Format(revenue, "#,##0.00") + "</td>"
		if !strings.Contains(m.HTML, ">"+region+"</td>") || !strings.Contains(m.HTML, cell) {
			t.Errorf("HTML lacks the row of %s with %s", region, cell)
		}
	}
	// The chart: an <img> by cid: whose part is in the message, inline, a PNG.
	ref := cidRef.FindStringSubmatch(m.HTML)
	if ref == nil {
		t.Fatalf("HTML references no inline image:\n%s", m.HTML)
	}
	var inline, pdf bool
	for _, a := range m.Attachments {
		switch {
		case a.ContentID == ref[1]:
			inline = a.Inline && a.ContentType == "image/png" && bytes.HasPrefix(a.Data, []byte("\x89PNG"))
		case a.ContentType == "application/pdf":
			pdf = !a.Inline && bytes.HasPrefix(a.Data, []byte("%PDF-"))
		}
	}
	if !inline || !pdf {
		t.Errorf("inline PNG %s present: %v; PDF attached: %v; parts %+v", ref[1], inline, pdf, names(m.Attachments))
	}
	// RFC 8058 one-click unsubscribe.
	list := m.Header.Get("List-Unsubscribe")
	if m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || !strings.HasPrefix(list, "<"+publicURL+"/unsubscribe/") {
		t.Fatalf("List-Unsubscribe %q, List-Unsubscribe-Post %q", list, m.Header.Get("List-Unsubscribe-Post"))
	}
	link := follow(t, strings.Trim(list, "<>"))

	// A GET (a mail scanner following the link) only asks.
	status, _, page := anonymous(t, b.URL, "GET", link, "")
	if status != 200 || !bytes.Contains(page, []byte("Unsubscribe?")) {
		t.Fatalf("GET link: %d %s", status, page)
	}
	if p := admin.do("GET", subURI, "").json(t)["subscription"].(map[string]any)["pausedChannels"]; p != nil {
		t.Fatalf("a GET paused the channel: %v", p)
	}
	// The mail client's one-click POST pauses it.
	status, _, page = anonymous(t, b.URL, "POST", link, "List-Unsubscribe=One-Click")
	if status != 200 || !bytes.Contains(page, []byte("Unsubscribed")) {
		t.Fatalf("POST link: %d %s", status, page)
	}
	paused := admin.do("GET", subURI, "").json(t)["subscription"].(map[string]any)["pausedChannels"].([]any)
	if len(paused) != 1 || !strings.Contains(paused[0].(map[string]any)["by"].(string), b.Config.AdminLogin) {
		t.Fatalf("pausedChannels = %v", paused)
	}
	runs := admin.do("GET", subURI+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
	first := runs[0].(map[string]any)["run"].(map[string]any)
	events, _ := first["events"].([]any)
	if len(events) != 1 || events[0].(map[string]any)["event"] != "unsubscribed" {
		t.Errorf("the run whose mail was unsubscribed from records %v", first["events"])
	}

	// The next fire sends nothing to the paused channel.
	b.Clock.Advance(time.Minute)
	waitFor(t, func() bool {
		runs := admin.do("GET", subURI+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		return len(runs) == 2 && runs[0].(map[string]any)["run"].(map[string]any)["state"] != "running"
	})
	runs = admin.do("GET", subURI+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
	second := runs[0].(map[string]any)["run"].(map[string]any)
	if second["state"] != "skipped" || len(second["pausedChannels"].([]any)) != 1 {
		t.Errorf("run after the unsubscribe: state %v, pausedChannels %v, reason %v", second["state"], second["pausedChannels"], second["reason"])
	}
	if n := len(smtp.Messages()); n != 1 {
		t.Errorf("%d mails after the unsubscribe, want still 1", n)
	}
	// A second POST changes nothing and says it is done.
	if status, _, _ = anonymous(t, b.URL, "POST", link, "List-Unsubscribe=One-Click"); status != 200 {
		t.Errorf("second POST: %d", status)
	}
	// A forged token is refused: one character of its signature changed (the
	// last but one, whose six bits all count).
	forged := []byte(link)
	if i := len(forged) - 2; forged[i] == 'A' {
		forged[i] = 'B'
	} else {
		forged[i] = 'A'
	}
	if status, _, _ = anonymous(t, b.URL, "POST", string(forged), ""); status != 404 {
		t.Errorf("forged token: %d, want 404", status)
	}

	// The owner lists no paused channels: the next fire mails again.
	put := admin.do("GET", subURI, "").json(t)
	put["subscription"].(map[string]any)["pausedChannels"] = []any{}
	wantStatus(t, admin.do("PUT", subURI, jsonString(put)), 200)
	b.Clock.Advance(time.Minute)
	mails, err := smtp.Await(ctx, 2)
	if err != nil {
		t.Fatalf("after resuming: %v", err)
	}
	// The link of the mail before the resume no longer pauses the channel; the
	// new mail's link does.
	if status, _, page = anonymous(t, b.URL, "POST", link, "List-Unsubscribe=One-Click"); status != 410 ||
		!bytes.Contains(page, []byte("turned back on")) {
		t.Errorf("the old link after the resume: %d %s, want 410", status, page)
	}
	if p := admin.do("GET", subURI, "").json(t)["subscription"].(map[string]any)["pausedChannels"]; p != nil {
		t.Fatalf("the old link paused the channel again: %v", p)
	}
	fresh := follow(t, strings.Trim(mails[1].Header.Get("List-Unsubscribe"), "<>"))
	if status, _, page = anonymous(t, b.URL, "GET", fresh, ""); status != 200 || !bytes.Contains(page, []byte("Unsubscribe?")) {
		t.Errorf("the new mail's link: %d %s", status, page)
	}
}

// demoRegions maps the demo's region ids to their names.
func demoRegions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range readCSV(t, "../testdata/demo/regions.csv")[1:] {
		out[r[0]] = r[1]
	}
	if len(out) == 0 {
		t.Fatal("no regions")
	}
	return out
}

// demoMail runs the demo with a real SMTP server and a public URL until its
// subscription has mailed the chart report once, and returns that mail.
func demoMail(t *testing.T) (*apptest.Bundle, *channeltest.SMTPServer, channeltest.Email) {
	t.Helper()
	smtp := channeltest.NewSMTPServer(t)
	b := apptest.StartDemo(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "reports@herald.test"
		c.PublicURL = publicURL
	})
	b.Clock.Advance(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mails, err := smtp.Await(ctx, 1)
	if err != nil {
		l := b.Log.String()
		t.Fatalf("%v; the service's log ends:\n%s", err, l[max(0, len(l)-20000):])
	}
	return b, smtp, mails[0]
}

func names(as []channeltest.EmailAttachment) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name+" "+a.ContentType+" cid="+a.ContentID)
	}
	return out
}

// TestSMSLinkDownloadsAttachment: an SMS cannot carry the PDF, so it carries a
// link; the link downloads the file without a login until it expires, and
// then answers 410.
func TestSMSLinkDownloadsAttachment(t *testing.T) {
	gate.Parallel(t)
	tw := channeltest.NewTwilioServer(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		c.Channels["sms"].(*sms.Settings).BaseURL = tw.URL()
		c.PublicURL = publicURL
		c.Subs.FileLinkTTL = time.Hour
	})
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"smsConfiguration":`+
		`{"username":"`+tw.AccountSID()+`","password":"`+tw.AuthToken()+`","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"Phone"}}}`)
	wantStatus(t, r, 201)
	phone := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	wantStatus(t, w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["channels"] = []any{phone}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"PDF"}}}
	})), 201)

	w.b.Clock.Advance(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := tw.Await(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	body := msgs[0].Body
	found := regexp.MustCompile(regexp.QuoteMeta(publicURL) + `/f/\S+`).FindString(body)
	if !strings.HasPrefix(body, "Revenue alert\nRevenue fell to") || found == "" {
		t.Fatalf("SMS = %q", body)
	}
	if len(found) > len(publicURL)+80 {
		t.Errorf("link of %d characters is not short: %s", len(found), found)
	}
	link := follow(t, found)
	status, h, data := anonymous(t, w.b.URL, "GET", link, "")
	if status != 200 || !bytes.HasPrefix(data, []byte("%PDF-")) || h.Get("Content-Type") != "application/pdf" ||
		!strings.Contains(h.Get("Content-Disposition"), ".pdf") {
		t.Fatalf("download: %d %q %q, %d bytes", status, h.Get("Content-Type"), h.Get("Content-Disposition"), len(data))
	}
	// Another file index under the same signature is refused.
	u, _ := url.Parse(found)
	parts := strings.Split(strings.TrimPrefix(u.Path, "/f/"), ".")
	parts[1] = "1"
	if status, _, _ = anonymous(t, w.b.URL, "GET", "/f/"+strings.Join(parts, "."), ""); status != 404 {
		t.Errorf("changed link: %d, want 404", status)
	}
	w.b.Clock.Advance(time.Hour)
	if status, _, data = anonymous(t, w.b.URL, "GET", link, ""); status != 410 || bytes.HasPrefix(data, []byte("%PDF")) {
		t.Errorf("expired link: %d, %d bytes", status, len(data))
	}
}

// TestHTMLMessageTemplate: a message may be written as HTML; its markup
// stays, what its expressions write is escaped, and the text part keeps the
// text template. A template that does not parse is refused at its field.
func TestHTMLMessageTemplate(t *testing.T) {
	gate.Parallel(t)
	w := newNotifyWorld(t)
	metric := "${f:executeMetric('" + w.metricURI + "')}"
	r := w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) {
		s["message"].(map[string]any)["html"] = map[string]any{"expression": "<p>Revenue <b>${"}
	}))
	wantStatus(t, r, 400)
	if p := r.errorBody(t)["parameters"].([]any)[0]; p != "subscription.message.html.expression" {
		t.Errorf("error names %v", p)
	}
	w.subscribe(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["message"].(map[string]any)["html"] = map[string]any{"expression": `<p style="color:#b91c1c">Revenue <b>` + metric + `</b> ${'<i>'}</p>`}
		delete(s, "attachments")
	})
	w.b.Clock.Advance(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mails, err := w.smtp.Await(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := mails[0]
	if !strings.Contains(m.HTML, `<p style="color:#b91c1c">Revenue <b>35.50</b> &lt;i&gt;</p>`) {
		t.Errorf("HTML part:\n%s", m.HTML)
	}
	if !strings.HasPrefix(m.Text, "Revenue fell to 35.50") {
		t.Errorf("text part = %q", m.Text)
	}
}

// TestReportMailInBrowser opens the demo's report mail in Chromium as a
// mail client shows it (inline images in place of their cid: references) at
// a desktop and a phone size: the page never scrolls sideways, and the chart
// is loaded and fits. Screenshots of both, and the mail's files, are written
// to the test's artifact folder (go test -artifacts keeps them).
func TestReportMailInBrowser(t *testing.T) {
	gate.Parallel(t)
	ctx := apptest.Chrome(t)
	_, _, m := demoMail(t)
	page := m.HTML
	dir := t.ArtifactDir()
	for _, a := range m.Attachments {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(a.Name)), a.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		if a.ContentID != "" {
			page = strings.ReplaceAll(page, `src="cid:`+a.ContentID+`"`,
				`src="data:`+a.ContentType+`;base64,`+base64.StdEncoding.EncodeToString(a.Data)+`"`)
		}
	}
	file := filepath.Join(dir, "mail.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(size.width, size.height), chromedp.Navigate("file://"+file))
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		var layout struct {
			Scroll, Inner, Img, Natural float64
		}
		layout, err = chromedp.Run(ctx, chromedp.Evaluate[struct{ Scroll, Inner, Img, Natural float64 }](`({
			Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth,
			Img: document.querySelector('img').getBoundingClientRect().right,
			Natural: document.querySelector('img').naturalWidth})`))
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		scroll, inner, img, imgNatural := layout.Scroll, layout.Inner, layout.Img, layout.Natural
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mail-"+size.name+".png"), shot, 0o600); err != nil {
			t.Fatal(err)
		}
		if scroll > inner {
			t.Errorf("%s: the page is %.0f pixels wide in a %.0f pixel window", size.name, scroll, inner)
		}
		if imgNatural == 0 || img > inner {
			t.Errorf("%s: the chart is not loaded (natural width %.0f) or overflows (right edge %.0f of %.0f)",
				size.name, imgNatural, img, inner)
		}
	}
	t.Logf("screenshots in %s", dir)
}
