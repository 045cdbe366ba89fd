package app_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/app/apptest"
)

// TestConsoleShowsRecipientsAndSlices drives the console in Chromium over a
// subscription to three members with filters on three regions: its page
// names the recipients, a run says how many it reached in how many slices
// and lists their deliveries, searchable; the recipients page shows each
// member's slice in words; a preview as one of them shows that member's
// numbers and slice. Every page is shot at 1280×800 and 390×844.
func TestConsoleShowsRecipientsAndSlices(t *testing.T) {
	gate.Parallel(t)
	ctx := apptest.Chrome(t)
	w := newPermWorld(t)
	users := []any{w.uris["ann"], w.uris["bob"], w.uris["cid"]}
	sub := w.subscribe(t, 201, map[string]any{"recipients": map[string]any{"users": users, "via": []any{"email"}}})
	w.fire(t, sub, 1, 3)

	br := &tab{t: t, ctx: ctx, base: w.b.URL, dir: t.ArtifactDir()}
	br.open("/console/login")
	br.submit(map[string]string{"#login": w.b.Config.AdminLogin, "#password": apptest.AdminPassword}, "button[type=submit]", "header nav")
	page := "/console/projects/" + w.m.pid + "/subscriptions/" + sub[strings.LastIndex(sub, "/")+1:]

	br.open(page)
	def := br.text("dl.def")
	for _, want := range []string{"ann@example.com", "bob@example.com", "cid@example.com", "each as themselves"} {
		if !strings.Contains(def, want) {
			t.Errorf("the definition does not name %q: %q", want, def)
		}
	}
	if counts := br.text(".runs .counts"); !strings.Contains(counts, "3 recipients in 3 slices") || !strings.Contains(counts, "sent 3") {
		t.Errorf("the run's counts: %q", counts)
	}
	br.shoot("recipients-subscription")

	br.do("open the run's deliveries", chromedp.Click(".runs .counts a"), chromedp.WaitVisible("form.search"))
	// The run's page has loaded for good before its form is used: a node of
	// a document still being replaced is gone by the time it is clicked.
	waitFor(t, func() bool {
		return js[bool](br, `document.readyState === "complete" && !!document.querySelector("form.search")`)
	})
	if d := br.text("table.deliveries"); !strings.Contains(d, "ann@example.com") || !strings.Contains(d, "cid@example.com") {
		t.Errorf("the run's deliveries: %q", d)
	}
	br.submit(map[string]string{"#recipient": "bob@"}, "form.search button", "table.deliveries")
	waitFor(t, func() bool { return strings.Contains(js[string](br, `location.search`), "recipient=bob") })
	br.do("the search's page", chromedp.WaitVisible("table.deliveries"))
	if d := br.text("table.deliveries"); !strings.Contains(d, "bob@example.com") || strings.Contains(d, "ann@example.com") {
		t.Errorf("the deliveries to bob@: %q", d)
	}
	br.shoot("recipients-run")

	br.open(page + "/recipients")
	list := br.text("table.recipients")
	for _, want := range []string{"Region IN (North)", "Region IN (East)", "Region IN (West)"} {
		if !strings.Contains(list, want) {
			t.Errorf("the recipients page does not show the slice %q: %q", want, list)
		}
	}
	br.shoot("recipients")

	br.do("preview as bob", chromedp.Evaluate[chromedp.Void](
		`[...document.querySelectorAll('table.recipients tr')].find(r => r.textContent.includes('bob@')).querySelector('a').click()`),
		chromedp.WaitVisible("section.card"))
	if main := br.text("main"); !strings.Contains(main, "Revenue: 100.00") || !strings.Contains(main, "Region IN (East)") ||
		!strings.Contains(main, "bob@example.com") {
		t.Errorf("the preview as bob: %q", main)
	}
	br.shoot("recipients-preview")
}
