package app_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/numfmt"
	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
)

// TestSubscriptionOnTheDemoFiresTwice runs a subscription with a PDF
// attachment every five seconds over the demo project: two fires make two
// runs, each with the metric's value in its text, the PDF, and one delivery
// per channel, written as mail to the outbox folder.
func TestSubscriptionOnTheDemoFiresTwice(t *testing.T) {
	gate.Parallel(t)
	b := apptest.StartDemo(t, func(c *app.Config) { c.Subs.MinInterval = time.Second })
	m := regexp.MustCompile(`demo project /svc/projects/([a-z0-9]+)`).FindStringSubmatch(b.Stdout.String())
	if m == nil {
		t.Fatalf("no demo project in:\n%s", b.Stdout)
	}
	pid := m[1]
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	revenue := objectByTitle(t, admin, pid, "metrics", "Revenue")
	report := objectByTitle(t, admin, pid, "reports", "Revenue by region")
	value, format, ok, err := b.Admin.ExecuteMetric(context.Background(), revenue)
	if err != nil || !ok {
		t.Fatalf("revenue: %v %v", ok, err)
	}

	var channels []any
	for _, to := range []string{"admin@herald.local", "sales@herald.local"} {
		r := admin.do("POST", b.AdminProfile+"/channelConfigurations",
			`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"`+to+`"}},"meta":{"title":"`+to+`"}}}`)
		wantStatus(t, r, 201)
		channels = append(channels, dig(r.json(t), "channelConfiguration", "meta", "uri"))
	}
	r := admin.do("POST", "/svc/projects/"+pid+"/users/"+uid(b.AdminProfile)+"/subscriptions", jsonString(map[string]any{
		"subscription": map[string]any{
			"triggers":    []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "*/5 * * * * *"}}},
			"condition":   map[string]any{"condition": map[string]any{"expression": "f:executeMetric('" + revenue + "') > 0"}},
			"message":     map[string]any{"template": map[string]any{"expression": "Revenue is ${f:executeMetric('" + revenue + "')}"}},
			"channels":    channels,
			"attachments": []any{map[string]any{"report": report, "formats": []any{"PDF"}}},
			"meta":        map[string]any{"title": "Every five seconds"},
		}}))
	wantStatus(t, r, 201)
	sub := dig(r.json(t), "subscription", "meta", "uri").(string)

	text := "Revenue is " + numfmt.Format(value, format)
	for fire := 1; fire <= 2; fire++ {
		b.Clock.Advance(5 * time.Second)
		waitFor(t, func() bool {
			items := dig(admin.do("GET", sub+"/runs", "").json(t), "runs", "items").([]any)
			return len(items) == fire && dig(items[0].(map[string]any), "run", "state") == "delivered"
		})
	}
	items := dig(admin.do("GET", sub+"/runs", "").json(t), "runs", "items").([]any)
	for i, it := range items {
		run := it.(map[string]any)["run"].(map[string]any)
		want := []string{"2026-03-02 09:00:10", "2026-03-02 09:00:05"}[i]
		if run["scheduledAt"] != want || run["text"] != text || run["condition"] != true {
			t.Errorf("run %d = at %v %q condition %v; want at %s %q", i, run["scheduledAt"], run["text"], run["condition"], want, text)
		}
		// The PDF, and the chart the mail's HTML shows inline.
		atts := run["attachments"].([]any)
		if len(atts) != 2 || dig(atts[0].(map[string]any), "contentType") != "application/pdf" ||
			!strings.HasSuffix(dig(atts[0].(map[string]any), "name").(string), ".pdf") ||
			dig(atts[1].(map[string]any), "contentType") != "image/png" || dig(atts[1].(map[string]any), "inline") != true {
			t.Errorf("run %d attachments = %v", i, atts)
		}
		if dels := run["deliveries"].([]any); len(dels) != 2 {
			t.Errorf("run %d has %d deliveries, want one per channel", i, len(dels))
		}
	}
	// Four mails (two runs, two channels), each carrying the text and the PDF.
	files, _ := filepath.Glob(filepath.Join(b.Config.Data, "outbox", "*.eml"))
	var ours int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), text) && strings.Contains(string(data), "application/pdf") {
			ours++
		}
	}
	if ours != 4 {
		t.Errorf("%d mails in the outbox carry the text and the PDF, want 4", ours)
	}
}

// objectByTitle finds an object of the project in a query list by its title.
func objectByTitle(t *testing.T, b *browser, pid, category, title string) string {
	t.Helper()
	for _, e := range dig(b.do("GET", "/svc/md/"+pid+"/query/"+category, "").json(t), "query", "entries").([]any) {
		if e.(map[string]any)["title"] == title {
			return e.(map[string]any)["link"].(string)
		}
	}
	t.Fatalf("no %s titled %q", category, title)
	return ""
}
