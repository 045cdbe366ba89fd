package app_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
)

// checksWorld is a subscription world whose mails go to a real SMTP
// server, with the stores and sales loaded and links built on publicURL.
type checksWorld struct {
	*notifyWorld
	m *mdClient
}

func newChecksWorld(t *testing.T, opts ...apptest.Option) *checksWorld {
	smtp := channeltest.NewSMTPServer(t)
	w := newSubWorldWith(t, append([]apptest.Option{func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
		c.PublicURL = publicURL
		c.Delivery.MaxAttempts = 1
	}}, opts...)...)
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	return &checksWorld{notifyWorld: &notifyWorld{subWorld: w, smtp: smtp}, m: m}
}

// load loads a dataset as the admin, with a new temporary token when the
// clock has moved past the admin's.
func (w *checksWorld) load(t *testing.T, dataset, mode, csv string) {
	t.Helper()
	r := w.m.load(dataset, mode, csv)
	if r.status == 401 {
		wantStatus(t, w.admin.do("GET", "/svc/account/token", ""), 200)
		r = w.m.load(dataset, mode, csv)
	}
	wantStatus(t, r, 200)
}

// report creates a report of one definition with content, and returns its URI.
func (w *checksWorld) report(title string, content map[string]any) string {
	def := w.m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": title},
		"content": content}}))
	return w.m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": title},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
}

// byDate is a report of the amount by sale date.
func (w *checksWorld) byDate(filters ...string) string {
	date := w.m.uris("sold_on.date")["sold_on.date"]
	fs := []any{}
	for _, f := range filters {
		fs = append(fs, map[string]any{"expression": f})
	}
	return w.report("Amount by date", map[string]any{"format": "grid", "filters": fs, "grid": map[string]any{
		"rows": []any{map[string]any{"attribute": map[string]any{"uri": date, "alias": ""}}}, "columns": []any{"metricGroup"},
		"metrics": []any{map[string]any{"uri": w.metricURI, "alias": ""}}}})
}

// everyFiveMinutes changes a subscription to fire every five minutes,
// always, with a message that reads nothing of the instant.
func everyFiveMinutes(s map[string]any) {
	s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
	s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
}

// fire moves the clock to the next fire and waits until the subscription
// has n runs, the newest final, and returns that run.
func (w *checksWorld) fire(t *testing.T, uri string, n int) map[string]any {
	t.Helper()
	w.b.Clock.Advance(5 * time.Minute)
	var runs []map[string]any
	waitFor(t, func() bool {
		runs = w.runs(t, uri)
		return len(runs) == n && runs[0]["state"] != "running" && runs[0]["state"] != "queued"
	})
	return runs[0]
}

// mails waits for n mails in all, and returns them.
func (w *checksWorld) mails(t *testing.T, n int) []channeltest.Email {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := w.smtp.Await(ctx, n)
	if err != nil {
		t.Fatalf("%v; %d mails", err, len(w.smtp.Messages()))
	}
	return got
}

// csvRows returns the rows of the mail's CSV attachment, header first.
func csvRows(t *testing.T, m channeltest.Email) [][]string {
	t.Helper()
	for _, a := range m.Attachments {
		if strings.HasPrefix(a.ContentType, "text/csv") {
			rows, err := csv.NewReader(bytes.NewReader(a.Data)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
	}
	t.Fatalf("no CSV among %v", names(m.Attachments))
	return nil
}

// TestEmptyReportSkipsOrTellsTheOwner: a report without rows skips the run
// with onEmpty skip, and nothing is mailed; with notifyOwner, the owner is
// told at the login address instead, and the channel is sent nothing.
func TestEmptyReportSkipsOrTellsTheOwner(t *testing.T) {
	gate.Parallel(t)
	w := newChecksWorld(t)
	stores := w.m.uris("attr.stores.id")["attr.stores.id"]
	empty := w.byDate(`[` + stores + `] = "Nowhere"`)
	skip := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["onEmpty"] = "skip"
		s["attachments"] = []any{map[string]any{"report": empty, "formats": []any{"CSV", "PDF"}}}
	})
	run := w.fire(t, skip, 1)
	if run["state"] != "skipped" || run["reason"] != "empty report" {
		t.Fatalf("run = %v %v, want skipped: empty report", run["state"], run["reason"])
	}
	if got := w.smtp.Messages(); len(got) != 0 {
		t.Fatalf("%d mails sent for an empty report, first %q", len(got), got[0].Subject)
	}

	tell := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["meta"] = map[string]any{"title": "Empty watch"}
		s["onEmpty"] = "notifyOwner"
		s["attachments"] = []any{map[string]any{"report": empty, "formats": []any{"CSV"}}}
	})
	w.b.Clock.Advance(5 * time.Minute)
	var runs []map[string]any
	waitFor(t, func() bool { runs = w.runs(t, tell); return len(runs) == 1 && runs[0]["state"] == "delivered" })
	if !strings.HasPrefix(fmt.Sprint(runs[0]["reason"]), "empty report; the owner was told") {
		t.Errorf("reason = %v", runs[0]["reason"])
	}
	m := w.mails(t, 1)[0]
	if m.Subject != `Herald: subscription "Empty watch" has nothing to send` || len(m.Attachments) != 0 ||
		!strings.Contains(m.Text, "had no rows") {
		t.Errorf("notice = %q %q, %d attachments", m.Subject, m.Text, len(m.Attachments))
	}
	var skipRuns []map[string]any
	waitFor(t, func() bool {
		skipRuns = w.runs(t, skip)
		return len(skipRuns) == 2 && skipRuns[0]["state"] != "running"
	})
	if skipRuns[0]["state"] != "skipped" {
		t.Errorf("the skipping subscription: %v", skipRuns)
	}
	if n := len(w.smtp.Messages()); n != 1 {
		t.Errorf("%d mails, want the notice only", n)
	}
}

// TestSendWhenChangedSendsUnchangedDataOnce: two fires over the same data
// mail once, although the PDF of each holds the time it was made; the
// second run is skipped, saying since when nothing changed. New data mails
// again.
func TestSendWhenChangedSendsUnchangedDataOnce(t *testing.T) {
	gate.Parallel(t)
	w := newChecksWorld(t)
	sub := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["sendWhen"] = "changed"
		s["attachments"] = []any{map[string]any{"report": w.byDate(), "formats": []any{"PDF", "CSV"}}}
	})
	first := w.fire(t, sub, 1)
	if first["state"] != "delivered" {
		t.Fatalf("first run %v: %v", first["state"], first["error"])
	}
	w.mails(t, 1)
	second := w.fire(t, sub, 2)
	if second["state"] != "skipped" || second["reason"] != "unchanged since 2026-03-02T09:05:00Z" {
		t.Fatalf("second run = %v (reason %v), want skipped, unchanged since the first's instant %v", second["state"], second["reason"], first["scheduledAt"])
	}
	if n := len(w.smtp.Messages()); n != 1 {
		t.Fatalf("%d mails over unchanged data, want 1", n)
	}
	w.load(t, "dataset.sales", "incremental", "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n4,7,s3,2025-04-01\n")
	if third := w.fire(t, sub, 3); third["state"] != "delivered" {
		t.Fatalf("run over new data = %v %v", third["state"], third["reason"])
	}
	w.mails(t, 2)
}

// TestNewRowsBySendsOnlyWhatIsNew: the first mail holds every row; after a
// load that adds three rows, the second holds exactly those three; a fire
// with nothing new is empty, and skipped.
func TestNewRowsBySendsOnlyWhatIsNew(t *testing.T) {
	gate.Parallel(t)
	w := newChecksWorld(t)
	date := w.m.uris("sold_on.date")["sold_on.date"]
	sub := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["onEmpty"] = "skip"
		s["attachments"] = []any{map[string]any{"report": w.byDate(), "formats": []any{"CSV"}, "newRowsBy": date}}
	})
	if run := w.fire(t, sub, 1); run["state"] != "delivered" {
		t.Fatalf("first run %v: %v", run["state"], run["error"])
	}
	rows := csvRows(t, w.mails(t, 1)[0])
	if dates := column(rows[1:], 0); fmt.Sprint(dates) != "[2024-01-31 2024-02-01 2025-03-01]" {
		t.Fatalf("first mail's rows: %v", rows)
	}
	w.load(t, "dataset.sales", "incremental", "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n"+
		"4,7,s3,2025-03-02\n5,8,s1,2025-03-03\n6,9,s2,2025-04-01\n")
	if run := w.fire(t, sub, 2); run["state"] != "delivered" {
		t.Fatalf("second run %v: %v %v", run["state"], run["reason"], run["error"])
	}
	rows = csvRows(t, w.mails(t, 2)[1])
	if got := fmt.Sprint(rows[1:]); got != "[[2025-03-02 7] [2025-03-03 8] [2025-04-01 9]]" {
		t.Fatalf("second mail's rows: %v, want exactly the three new", rows)
	}
	if run := w.fire(t, sub, 3); run["state"] != "skipped" || run["reason"] != "empty report" {
		t.Fatalf("third run = %v %v, want skipped: nothing new is empty", run["state"], run["reason"])
	}
	if n := len(w.smtp.Messages()); n != 2 {
		t.Errorf("%d mails, want 2", n)
	}
}

func column(rows [][]string, i int) []string {
	out := make([]string, len(rows))
	for j, r := range rows {
		out[j] = r[i]
	}
	return out
}

// TestDropAlertFiresOnceOnTheDrop: "dropped by 10% since the last fire" is
// one condition with f:previous; it holds at the fire that sees the drop,
// not at the first (no previous value), nor over steady data, nor after.
func TestDropAlertFiresOnceOnTheDrop(t *testing.T) {
	gate.Parallel(t)
	w := newChecksWorld(t)
	amount := "f:executeMetric('" + w.metricURI + "')"
	previous := "f:previous('" + w.metricURI + "')"
	sub := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["condition"] = map[string]any{"condition": map[string]any{"expression": previous + " != null and " + amount + " <= 0.9 * " + previous}}
		s["message"] = map[string]any{"template": map[string]any{"expression": "Amount dropped from ${" + previous + "} to ${" + amount +
			"} (${round((" + amount + " - " + previous + ") * 100 / " + previous + ")}%)"}}
		s["attachments"] = []any{}
	})
	for i, want := range []string{"not_triggered", "not_triggered"} {
		if run := w.fire(t, sub, i+1); run["state"] != want {
			t.Fatalf("fire %d over 35.50 = %v %v, want %s", i+1, run["state"], run["error"], want)
		}
	}
	// 35.50 to 30.50: 14% less.
	w.load(t, "dataset.sales", "full", "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n"+
		"1,10.50,s1,2024-01-31\n2,20,s2,2024-02-01\n")
	if run := w.fire(t, sub, 3); run["state"] != "delivered" {
		t.Fatalf("fire on the drop = %v %v", run["state"], run["error"])
	}
	if m := w.mails(t, 1)[0]; !strings.Contains(m.Text, "Amount dropped from 35.50 to 30.50 (-14%)") {
		t.Errorf("mail text = %q", m.Text)
	}
	if run := w.fire(t, sub, 4); run["state"] != "not_triggered" {
		t.Fatalf("fire after the drop = %v, want not_triggered", run["state"])
	}
	if n := len(w.smtp.Messages()); n != 1 {
		t.Errorf("%d mails, want one, on the drop", n)
	}
}

// TestOversizeAttachmentTravelsAsALink: a 12 MiB CSV is beyond
// smtp.maxAttachmentBytes (10 MiB by default): the mail goes without it,
// says so in one line, and its link downloads the whole file. Without
// publicURL, a file beyond the limit fails the delivery, saying why.
func TestOversizeAttachmentTravelsAsALink(t *testing.T) {
	gate.Parallel(t)
	w := newChecksWorld(t)
	// Names and cities of 120 characters, the most a label of the model
	// holds: 52,000 rows of the two and the amount are 12.6 MiB of CSV.
	const n = 52_000
	long := strings.Repeat("x", 114)
	var stores, sales strings.Builder
	stores.WriteString("id,nm_name,nm_city\n")
	sales.WriteString("attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n")
	for i := range n {
		fmt.Fprintf(&stores, "s%d,%s%06d,%s%06d\n", i, long, i, long, i)
		fmt.Fprintf(&sales, "%d,1,s%d,2025-01-01\n", i, i)
	}
	w.load(t, "dataset.stores", "full", stores.String())
	w.load(t, "dataset.sales", "full", sales.String())
	labels := w.m.uris("label.stores.name", "label.stores.city")
	big := w.report("Every store", map[string]any{"format": "grid", "grid": map[string]any{
		"rows": []any{map[string]any{"attribute": map[string]any{"uri": labels["label.stores.name"], "alias": ""}},
			map[string]any{"attribute": map[string]any{"uri": labels["label.stores.city"], "alias": ""}}},
		"columns": []any{"metricGroup"}, "metrics": []any{map[string]any{"uri": w.metricURI, "alias": ""}}}})
	sub := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["attachments"] = []any{map[string]any{"report": big, "formats": []any{"CSV"}}}
	})
	if run := w.fire(t, sub, 1); run["state"] != "delivered" {
		t.Fatalf("run %v: %v", run["state"], run["error"])
	}
	m := w.mails(t, 1)[0]
	for _, a := range m.Attachments {
		if !a.Inline {
			t.Errorf("the mail attaches %s (%d bytes)", a.Name, len(a.Data))
		}
	}
	line, _, _ := strings.Cut(m.Text, "\n")
	if !regexp.MustCompile(`^The attachments \(12\.\d MiB\) are larger than this channel takes \(10\.0 MiB\): download them`).MatchString(line) {
		t.Errorf("first line = %q", line)
	}
	link := regexp.MustCompile(regexp.QuoteMeta(publicURL) + `/f/\S+`).FindString(m.Text)
	if link == "" || !strings.Contains(m.HTML, `href="`+link+`"`) {
		t.Fatalf("no download link in the text and the HTML: %q", m.Text[:min(len(m.Text), 600)])
	}
	status, _, data := anonymous(t, w.b.URL, "GET", follow(t, link), "")
	if status != 200 || len(data) < 12<<20 || !bytes.HasPrefix(data, []byte(`"Store Name","City","Amount"`)) || bytes.Count(data, []byte("\n")) < n {
		t.Fatalf("download: %d, %d bytes, starts %q", status, len(data), data[:min(len(data), 40)])
	}
}

// TestOversizeWithoutPublicURLFails: with no publicURL there are no links,
// so a file beyond the limit fails the delivery with that reason: never a
// mail without it.
func TestOversizeWithoutPublicURLFails(t *testing.T) {
	gate.Parallel(t)
	w := newChecksWorld(t, func(c *app.Config) {
		c.PublicURL = ""
		smtpOf(c).MaxAttachmentBytes = 100
	})
	sub := w.subscribe(t, func(s map[string]any) {
		everyFiveMinutes(s)
		s["attachments"] = []any{map[string]any{"report": w.byDate(), "formats": []any{"PDF"}}}
	})
	run := w.fire(t, sub, 1)
	dels, _ := run["deliveries"].([]any)
	if run["state"] != "failed" || len(dels) != 1 ||
		!strings.Contains(fmt.Sprint(dels[0]), "larger than smtp.maxAttachmentBytes (100 bytes), and the service has no publicURL") {
		t.Fatalf("run = %v, deliveries %v", run["state"], dels)
	}
	if n := len(w.smtp.Messages()); n != 0 {
		t.Errorf("%d mails sent", n)
	}
}

// TestChecksValidation: every new field is refused with a 400 naming its
// path when wrong, and kept as given when right.
func TestChecksValidation(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	m := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	ids := m.uris("sold_on.date", "attr.stores.id", "sold_on.year")
	set := func(key string, v any) func(map[string]any) { return func(s map[string]any) { s[key] = v } }
	att := func(newRowsBy string) func(map[string]any) {
		return set("attachments", []any{map[string]any{"report": w.report, "formats": []any{"CSV"}, "newRowsBy": newRowsBy}})
	}
	cond := func(expr string) func(map[string]any) {
		return set("condition", map[string]any{"condition": map[string]any{"expression": expr}})
	}
	for _, tc := range []struct {
		name           string
		change         func(map[string]any)
		param, message string
	}{
		{"unknown onEmpty", set("onEmpty", "ignore"), "subscription.onEmpty", "send, skip or notifyOwner"},
		{"onEmpty not text", set("onEmpty", 1), "subscription.onEmpty", ""},
		{"unknown sendWhen", set("sendWhen", "often"), "subscription.sendWhen", "always or changed"},
		{"newRowsBy not a date", att(ids["attr.stores.id"]), "subscription.attachments[0].newRowsBy", "not the date attribute"},
		{"newRowsBy a year", att(ids["sold_on.year"]), "subscription.attachments[0].newRowsBy", "not the date attribute"},
		{"newRowsBy a metric", att(w.metricURI), "subscription.attachments[0].newRowsBy", "not the date attribute"},
		{"newRowsBy of another project", att("/svc/md/zzz/obj/1"), "subscription.attachments[0].newRowsBy", "this project"},
		{"newRowsBy nothing", att("/svc/md/" + w.pid + "/obj/99999"), "subscription.attachments[0].newRowsBy", "not the date attribute"},
		{"previous of no metric", cond("f:previous('/svc/md/" + w.pid + "/obj/99999') > 3"), "subscription.condition.condition.expression",
			"reads f:previous('/svc/md/" + w.pid + "/obj/99999'), which names no metric"},
		{"previous of a report", set("message", map[string]any{"template": map[string]any{"expression": "${f:previous('" + w.report + "')}"}}),
			"subscription.message.template.expression", "names no metric"},
		{"previous without a URI", cond("f:previous() > 3"), "subscription.condition.condition.expression", "f:previous takes a metric URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.jane.do("POST", w.subsBase, w.body(t, tc.change))
			wantStatus(t, r, 400)
			e := r.errorBody(t)
			params := e["parameters"].([]any)
			if len(params) == 0 || params[0] != tc.param {
				t.Errorf("parameters = %v, want %s", params, tc.param)
			}
			if msg := fmt.Sprintf(e["message"].(string), params...); !strings.Contains(msg, tc.message) {
				t.Errorf("message %q lacks %q", msg, tc.message)
			}
		})
	}
	r := w.jane.do("POST", w.subsBase, w.body(t, func(s map[string]any) {
		s["onEmpty"], s["sendWhen"] = "notifyOwner", "changed"
		att(ids["sold_on.date"])(s)
		cond("f:previous('" + w.metricURI + "') == null or f:executeMetric('" + w.metricURI + "') < f:previous('" + w.metricURI + "')")(s)
	}))
	wantStatus(t, r, 201)
	sub := r.json(t)["subscription"].(map[string]any)
	if sub["onEmpty"] != "notifyOwner" || sub["sendWhen"] != "changed" ||
		dig(sub, "attachments").([]any)[0].(map[string]any)["newRowsBy"] != ids["sold_on.date"] {
		t.Errorf("stored = %v", sub)
	}
	r = w.jane.do("POST", w.subsBase, w.body(t, nil))
	wantStatus(t, r, 201)
	if sub := r.json(t)["subscription"].(map[string]any); sub["onEmpty"] != "send" || sub["sendWhen"] != "always" {
		t.Errorf("defaults: onEmpty %v sendWhen %v", sub["onEmpty"], sub["sendWhen"])
	}
}
