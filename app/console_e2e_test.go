package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
)

// tab drives one browser tab through the console.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // screenshots
}

// do runs browser actions, failing the test on an error.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// js evaluates an expression and returns its value.
func js[T any](b *tab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// open loads a console page and waits for its main content.
func (b *tab) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible("main"))
}

// submit fills the form fields (CSS selector → value), clicks the element
// matching button and waits for the next page to show wait.
func (b *tab) submit(fields map[string]string, button, wait string) {
	b.t.Helper()
	var set []chromedp.Action[chromedp.Void]
	for sel, v := range fields {
		set = append(set, chromedp.SetValue(sel, v))
	}
	b.do("fill the form", set...)
	b.do("submit "+button, chromedp.Click(button), chromedp.WaitVisible(wait))
}

// shoot writes screenshots of the page at a desktop and a phone size, and
// checks that neither scrolls sideways.
func (b *tab) shoot(name string) {
	b.t.Helper()
	for _, size := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		b.do("resize", chromedp.EmulateViewport(size.w, size.h))
		// The page takes the emulated size at its next layout: measure once it has.
		waitFor(b.t, func() bool { return js[bool](b, fmt.Sprintf(`window.innerWidth === %d`, size.w)) })
		if wide := js[string](b, wideElements); wide != "" {
			b.t.Errorf("%s at %s scrolls sideways: %s", name, size.name, wide)
		}
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			b.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(b.dir, fmt.Sprintf("%s-%s.png", name, size.name)), shot, 0o600); err != nil {
			b.t.Fatal(err)
		}
	}
	b.do("resize", chromedp.EmulateViewport(1280, 800))
}

// wideElements names, when the page is wider than the window, the first
// elements that reach past the window's right edge; "" when it is not.
const wideElements = `document.documentElement.scrollWidth <= window.innerWidth ? "" :
	[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
		.slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + " " +
			JSON.stringify((e.textContent || "").trim().slice(0, 60))).join("; ") || "the page"`

func (b *tab) text(sel string) string {
	b.t.Helper()
	return js[string](b, `(document.querySelector(`+quoteJS(sel)+`)||{}).textContent||""`)
}

func quoteJS(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) + "'"
}

// TestConsoleInBrowser drives the console as a person would, in Chromium,
// against a running Herald with the demo: sign in, add an e-mail channel,
// create a subscription with a wrong cron and see the error at that field,
// fix it, send it now and see the run delivered and the mail at the SMTP
// server, preview it, pause it, sign out. Every page is shot at 1280×800 and
// 390×844 into the test's artifact folder (go test -artifacts keeps them).
func TestConsoleInBrowser(t *testing.T) {
	gate.Parallel(t)
	ctx := apptest.Chrome(t)
	smtp := channeltest.NewSMTPServer(t)
	b := apptest.StartDemo(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "reports@herald.test"
	})
	br := &tab{t: t, ctx: ctx, base: b.URL, dir: t.ArtifactDir()}

	// Signed out, the console asks to sign in, and comes back where it was asked.
	br.open("/console/channels")
	if !strings.Contains(js[string](br, `location.href`), "/console/login?next=%2Fconsole%2Fchannels") {
		t.Fatalf("signed out: at %s", js[string](br, `location.href`))
	}
	br.shoot("sign-in")
	br.submit(map[string]string{"#login": b.Config.AdminLogin, "#password": "wrong"}, "button[type=submit]", "#login-error")
	br.submit(map[string]string{"#login": b.Config.AdminLogin, "#password": apptest.AdminPassword}, "button[type=submit]", "header nav")
	if h := br.text("h1"); h != "Channels" {
		t.Fatalf("after signing in: %q", h)
	}
	br.shoot("channels")

	// An e-mail channel.
	br.open("/console/channels/new")
	br.shoot("channel-new")
	br.submit(map[string]string{"#title": "Ops mailbox", "input[name='emailConfiguration.to']": "ops@example.com"},
		"form.form button[type=submit]", ".notice")
	if !strings.Contains(br.text("table.list"), "ops@example.com") {
		t.Fatalf("the new channel is not listed: %q", br.text("main"))
	}

	// The demo project, with the demo's subscription.
	br.open("/console/projects")
	if !strings.Contains(br.text("table.list"), "Revenue every minute") {
		t.Fatalf("projects page: %q", br.text("main"))
	}
	br.shoot("subscriptions")
	project := js[string](br, `location.pathname`)

	// A subscription with a cron of five fields: the error is at that field.
	br.open(project + "/subscriptions/new")
	br.shoot("subscription-new")
	br.do("choose the channel", chromedp.Evaluate[chromedp.Void](
		`document.querySelectorAll('input[name=channels]').forEach(c => { c.checked = c.parentElement.textContent.includes('Ops mailbox') })`))
	br.submit(map[string]string{"#title": "Morning revenue", "#trigger_cron_0": "0 8 * * *", "#trigger_tz_0": "Europe/Prague",
		"#message": "Revenue so far: ${f:executeMetric('" + demoMetric(t, br) + "')}"}, "form.form button[type=submit]", "#trigger_cron_0-error")
	if invalid := js[string](br, `document.getElementById('trigger_cron_0').getAttribute('aria-invalid')`); invalid != "true" {
		t.Errorf("the cron field is not marked invalid")
	}
	t.Logf("error at the cron field: %s", br.text("#trigger_cron_0-error"))
	br.shoot("subscription-error")

	// Fixed, it saves; the page shows the schedule in words and the next fires.
	br.submit(map[string]string{"#trigger_cron_0": "0 0 8 * * MON-FRI"}, "form.form button[type=submit]", ".notice")
	if words := br.text("main"); !strings.Contains(words, "Europe/Prague") || !strings.Contains(words, "Morning revenue") {
		t.Errorf("subscription page: %q", words)
	}
	// The next fires are in the schedule's own zone, named (2026-03-03 is a Tuesday).
	if next := br.text("ol.plain li"); next != "Tue 3 Mar 2026 08:00 CET" {
		t.Errorf("first next fire %q, want Tue 3 Mar 2026 08:00 CET", next)
	}
	br.shoot("subscription")
	sub := js[string](br, `location.pathname`)

	// Send now: the run appears and becomes delivered; the mail is at the server.
	// The page is opened afresh first, so that the notice waited for is the one
	// the button's answer brings, not the saved page's.
	br.open(sub)
	br.do("send now", chromedp.Click(`form[action$="/send"] button`), chromedp.WaitVisible(".notice"))
	if n := br.text(".notice"); !strings.Contains(n, "Sending now") {
		t.Errorf("after send now, the notice says %q", n)
	}
	ctxMail, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mails, err := smtp.Await(ctxMail, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(mails[len(mails)-1].To, ","), "ops@example.com") {
		t.Errorf("mail to %v", mails[len(mails)-1].To)
	}
	waitFor(t, func() bool {
		br.open(sub)
		return strings.Contains(br.text(".runs .badge"), "delivered")
	})
	// A provider's id is one word: the widest letters a random Message-ID may
	// have must wrap on a phone, not widen the run's card.
	br.do("widest provider id", chromedp.Evaluate[chromedp.Void](
		`document.querySelector('.deliveries td[data-label=Detail] .muted').textContent = 'id <' + 'mw'.repeat(13) + '@herald.test>'`))
	br.shoot("subscription-delivered")

	// Preview.
	br.open(sub + "/preview")
	if !strings.Contains(br.text("main"), "Revenue so far") {
		t.Errorf("preview: %q", br.text("main"))
	}
	br.shoot("preview")

	// Pause.
	br.open(sub)
	br.do("pause", chromedp.Click(`form[action$="/enabled"] button`), chromedp.WaitVisible(".notice"))
	if !strings.Contains(br.text("h1"), "paused") {
		t.Errorf("after pausing: %q", br.text("h1"))
	}

	// Sign out: the console asks to sign in again.
	br.do("sign out", chromedp.Click(`.signout button`), chromedp.WaitVisible("#login"))
	br.open("/console/projects")
	if !strings.Contains(js[string](br, `location.pathname`), "/console/login") {
		t.Errorf("after signing out the console still opens")
	}
	t.Logf("screenshots in %s", br.dir)
}

// demoMetric is the URI of the demo's Revenue metric, read from the picker.
func demoMetric(t *testing.T, b *tab) string {
	v := js[string](b, `[...document.querySelectorAll('#metric-pick option')].find(o => o.textContent === 'Revenue').value`)
	uri := strings.TrimSuffix(strings.TrimPrefix(v, "f:executeMetric('"), "')")
	if !strings.HasPrefix(uri, "/svc/md/") {
		t.Fatalf("no Revenue metric in the picker: %q", v)
	}
	return uri
}
