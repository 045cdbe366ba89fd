package console

import (
	"context"
	"encoding/json"
	"html"
	"html/template"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

func TestTitledNamesKnownMetricsOnly(t *testing.T) {
	t.Parallel()
	names := map[string]string{"/svc/md/p/obj/32": "Revenue", "/svc/md/p/obj/7": `<b>"Net" & co</b>`}
	for src, want := range map[string]string{
		"f:executeMetric('/svc/md/p/obj/32') lt 16":                    `<abbr class="metric" title="/svc/md/p/obj/32">Revenue</abbr> lt 16`,
		`f : executeMetric( "/svc/md/p/obj/32" )`:                      `<abbr class="metric" title="/svc/md/p/obj/32">Revenue</abbr>`,
		"f:executeMetric('/svc/md/p/obj/7')":                           `<abbr class="metric" title="/svc/md/p/obj/7">&lt;b&gt;&#34;Net&#34; &amp; co&lt;/b&gt;</abbr>`,
		"f:executeMetric('/svc/md/p/obj/9') > 1":                       "f:executeMetric(&#39;/svc/md/p/obj/9&#39;) &gt; 1",
		"f:previous(f:executeMetric('/svc/md/p/obj/32')) < 1 && '<x>'": `f:previous(<abbr class="metric" title="/svc/md/p/obj/32">Revenue</abbr>) &lt; 1 &amp;&amp; &#39;&lt;x&gt;&#39;`,
		"": "",
	} {
		if got := string(titled(names, src)); got != want {
			t.Errorf("titled(%q) =\n%s\nwant\n%s", src, got, want)
		}
	}
}

var abbrTag = regexp.MustCompile(`<abbr class="metric" title="[^"<>]*">[^<>]*</abbr>`)

// FuzzTitled: whatever the expression and the titles, titled gives text with
// no markup but its own abbr elements, and without titles it is the
// expression escaped.
func FuzzTitled(f *testing.F) {
	f.Add("f:executeMetric('/svc/md/p/obj/1') lt 16", "/svc/md/p/obj/1", "Revenue")
	f.Add(`f:executeMetric("/a") + f:executeMetric('/b')`, "/a", `"><script>`)
	f.Fuzz(func(t *testing.T, src, uri, title string) {
		out := string(titled(map[string]string{uri: title}, src))
		if rest := abbrTag.ReplaceAllString(out, ""); strings.ContainsAny(rest, "<>") {
			t.Fatalf("titled(%q) with %q=%q: markup of its own: %s", src, uri, title, out)
		}
		if got := string(titled(nil, src)); got != template.HTMLEscapeString(src) {
			t.Fatalf("titled(%q) without titles = %q", src, got)
		}
	})
}

// TestMetricsReadByTitle: the subscription page shows the condition, the
// subject and the message with the metric's title where the expression calls
// it, its URI on hover, and so does the run history beside each value; the
// edit form keeps the expressions exactly as written.
func TestMetricsReadByTitle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	detail, err := json.Marshal(map[string]any{"values": map[string]float64{f.metric: 12.5}, "condition": true})
	must(t, err)
	now := time.Now()
	must(t, f.st.ClaimRun(ctx, store.Run{ID: store.NewID(24), SubscriptionID: f.sid, ScheduledAt: now.Truncate(time.Second),
		State: "delivered", Detail: detail, Started: now, Finished: now}))
	b := f.signIn(t, "jane")
	sub := consoleSub(f.pid, f.sid)

	page := b.get(t, sub)
	wantStatus(t, "the subscription", page, http.StatusOK)
	revenue := `<abbr class="metric" title="` + f.metric + `">Revenue</abbr>`
	wantIn(t, "the subscription", page,
		"<code>"+revenue+" lt 16</code>",
		"<pre>Revenue fell to ${"+revenue+"}</pre>",
		"<span>"+revenue+": <strong>12.5</strong></span>")
	if strings.Contains(page.body, "executeMetric") {
		t.Errorf("the page shows a metric's call: %s", between(page.body, "<h2>Definition</h2>", "</section>"))
	}

	edit := b.get(t, sub+"/edit")
	wantStatus(t, "the form", edit, http.StatusOK)
	condition := html.EscapeString("f:executeMetric('" + f.metric + "') lt 16")
	message := html.EscapeString("Revenue fell to ${f:executeMetric('" + f.metric + "')}")
	wantIn(t, "the form", edit, condition, message)
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}
