package app_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
)

// storesMAQL is a model of stores, their managers (each with an e-mail
// address, of one store) and the stores' sales.
const storesMAQL = `CREATE DATASET {dataset.stores} VISUAL(TITLE "Stores");
CREATE ATTRIBUTE {attr.stores.id} VISUAL(TITLE "Store") AS KEYS {f_stores.id} FULLSET;
ALTER DATASET {dataset.stores} ADD {attr.stores.id};
ALTER ATTRIBUTE {attr.stores.id} ADD LABELS {label.stores.name} VISUAL(TITLE "Store") AS {f_stores.nm_name};
ALTER ATTRIBUTE {attr.stores.id} DEFAULT LABEL {label.stores.name};
CREATE DATASET {dataset.managers} VISUAL(TITLE "Managers");
CREATE ATTRIBUTE {attr.managers.id} VISUAL(TITLE "Manager") AS KEYS {f_managers.id} FULLSET;
ALTER DATASET {dataset.managers} ADD {attr.managers.id};
ALTER ATTRIBUTE {attr.managers.id} ADD LABELS {label.managers.email} VISUAL(TITLE "E-mail") AS {f_managers.nm_email};
ALTER ATTRIBUTE {attr.managers.id} DEFAULT LABEL {label.managers.email};
ALTER ATTRIBUTE {attr.stores.id} ADD KEYS {f_managers.stores_id};
CREATE DATASET {dataset.sales} VISUAL(TITLE "Sales");
CREATE ATTRIBUTE {attr.sales.id} VISUAL(TITLE "Sale") AS KEYS {f_sales.id} FULLSET;
CREATE FACT {fact.sales.amount} VISUAL(TITLE "Amount") AS {f_sales.f_amount};
ALTER DATASET {dataset.sales} ADD {attr.sales.id}, {fact.sales.amount};
ALTER ATTRIBUTE {attr.stores.id} ADD KEYS {f_sales.stores_id};
SYNCHRONIZE {dataset.stores}, {dataset.managers}, {dataset.sales};`

// burstWorld is a project of stores s1..sN, each with one sale of N*100,
// and managers loaded from rows of "email,store"; the admin owns a
// subscription bursting to the managers.
type burstWorld struct {
	b     *apptest.Bundle
	smtp  *channeltest.SMTPServer
	admin *browser
	m     *mdClient
	ids   map[string]string
	// sales is the revenue metric; managers the burst's report (managers by
	// store), byStore the report of sales by store.
	sales, managers, byStore string
}

func newBurstWorld(t *testing.T, stores int, managers []string, opts ...apptest.Option) *burstWorld {
	t.Helper()
	smtp := channeltest.NewSMTPServer(t)
	opts = append([]apptest.Option{func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "reports@herald.test"
		c.Delivery.MaxAttempts = 1
	}}, opts...)
	b := apptest.Start(t, opts...)
	w := &burstWorld{b: b, smtp: smtp, admin: newBrowser(t, b.URL, "ua-admin")}
	w.admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	w.m = newMD(t, b, w.admin)
	wantStatus(t, w.m.manage(storesMAQL), 200)
	var st, sa, mg strings.Builder
	st.WriteString("id,nm_name\n")
	sa.WriteString("id,f_amount,stores_id\n")
	for i := 1; i <= stores; i++ {
		fmt.Fprintf(&st, "s%d,Store %d\n", i, i)
		fmt.Fprintf(&sa, "%d,%d,s%d\n", i, i*100, i)
	}
	mg.WriteString("id,nm_email,stores_id\n")
	for i, row := range managers {
		fmt.Fprintf(&mg, "m%d,%s\n", i+1, row)
	}
	wantStatus(t, w.m.load("dataset.stores", "full", st.String()), 200)
	wantStatus(t, w.m.load("dataset.sales", "full", sa.String()), 200)
	wantStatus(t, w.m.load("dataset.managers", "full", mg.String()), 200)
	w.ids = w.m.uris("attr.stores.id", "label.stores.name", "label.managers.email", "attr.managers.id")
	w.sales = w.m.create(metricJSON("Sales", "SELECT SUM({fact.sales.amount})"))
	count := w.m.create(metricJSON("Managers", "SELECT COUNT({attr.managers.id})"))
	w.managers = w.report(t, "Managers", []string{w.ids["label.managers.email"], w.ids["label.stores.name"]}, count)
	w.byStore = w.report(t, "Sales by store", []string{w.ids["label.stores.name"]}, w.sales)
	return w
}

// report makes a report of the metric by the labels, and returns its URI.
func (w *burstWorld) report(t *testing.T, title string, labels []string, metric string) string {
	t.Helper()
	var rows []any
	for _, l := range labels {
		rows = append(rows, gridAttr(l))
	}
	def := w.m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": title},
		"content": gridDef(rows, []any{"metricGroup"}, []string{metric})}}))
	return w.m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": title},
		"content": map[string]any{"domains": []any{}, "definitions": []any{def}}}}))
}

// subscribe posts a subscription of the admin's bursting to the managers
// with the given burst fields, and returns its URI (the body unless 201).
func (w *burstWorld) subscribe(t *testing.T, status int, burst map[string]any) string {
	t.Helper()
	b := map[string]any{"report": w.managers, "address": w.ids["label.managers.email"], "by": w.ids["attr.stores.id"], "via": "email"}
	for k, v := range burst {
		b[k] = v
	}
	sub := map[string]any{
		"triggers":    []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 * * * * *"}}},
		"condition":   map[string]any{"condition": map[string]any{"expression": "true"}},
		"subject":     map[string]any{"template": map[string]any{"expression": "Your store"}},
		"message":     map[string]any{"template": map[string]any{"expression": "Sales: ${f:executeMetric('" + w.sales + "')}"}},
		"attachments": []any{map[string]any{"report": w.byStore, "formats": []any{"CSV"}}},
		"burst":       b,
		"meta":        map[string]any{"title": "Store sales"},
	}
	r := w.admin.do("POST", "/svc/projects/"+w.m.pid+"/users/"+uid(w.b.AdminProfile)+"/subscriptions",
		jsonString(map[string]any{"subscription": sub}))
	wantStatus(t, r, status)
	if status != 201 {
		return r.body
	}
	return dig(r.json(t), "subscription", "meta", "uri").(string)
}

// fire moves the clock on a minute and returns the subscription's first run
// once it is final and mails more mails have arrived, and those mails.
func (w *burstWorld) fire(t *testing.T, sub string, mails int) (map[string]any, []channeltest.Email) {
	t.Helper()
	before := len(w.smtp.Messages())
	w.b.Clock.Advance(time.Minute)
	waitFor(t, func() bool { return len(w.smtp.Messages()) >= before+mails })
	var run map[string]any
	waitFor(t, func() bool {
		r := w.admin.do("GET", sub+"/runs?limit=1", "")
		if r.status == 401 {
			wantStatus(t, w.admin.do("GET", "/svc/account/token", ""), 200)
			return false
		}
		items := r.json(t)["runs"].(map[string]any)["items"].([]any)
		if len(items) == 0 {
			return false
		}
		run = items[0].(map[string]any)["run"].(map[string]any)
		return run["state"] != "running" && run["state"] != "queued"
	})
	return run, w.smtp.Messages()[before:]
}

// TestBurstSendsEachAddressItsStore: a burst from a report of 1,000 managers'
// addresses over 10 stores mails each address only its store's numbers (its
// text and its CSV), renders each store once, and skips the row of a
// malformed address, counting it; a report without the named label or
// attribute is refused, naming the field.
func TestBurstSendsEachAddressItsStore(t *testing.T) {
	gate.Parallel(t)
	var managers []string
	storeOf := map[string]int{}
	for i := range 1000 {
		store := 1 + i%10
		address := fmt.Sprintf("m%04d@example.com", i)
		managers = append(managers, address+",s"+strconv.Itoa(store))
		storeOf[address] = store
	}
	managers = append(managers, "not an address,s3")
	w := newBurstWorld(t, 10, managers)

	for field, change := range map[string]map[string]any{
		"subscription.burst.address": {"report": w.byStore},
		"subscription.burst.by":      {"report": w.report(t, "Addresses", []string{w.ids["label.managers.email"]}, w.sales)},
		"subscription.burst.via":     {"via": "pigeon"},
		"subscription.burst.report":  {"report": w.sales}, // a metric: neither a report nor a report definition
	} {
		if body := w.subscribe(t, 400, change); !strings.Contains(body, field) {
			t.Errorf("a burst with %v: %s, want %s named", change, body, field)
		}
	}
	sub := w.subscribe(t, 201, nil)
	run, mails := w.fire(t, sub, 1000)
	if len(mails) != 1000 {
		t.Fatalf("%d mails, want 1000", len(mails))
	}
	seen := map[string]bool{}
	for _, m := range mails {
		address := m.To[0]
		store, ok := storeOf[address]
		if !ok || seen[address] {
			t.Fatalf("a mail to %v (seen before: %v)", m.To, seen[address])
		}
		seen[address] = true
		want := fmt.Sprintf("Sales: %s.00", strconv.Itoa(store*100))
		if store == 10 {
			want = "Sales: 1,000.00"
		}
		if !strings.Contains(m.Text, want) {
			t.Errorf("the mail to %s says %q, want %q", address, m.Text, want)
		}
		rows := csvOf(t, m)
		if len(rows) != 2 || rows[1][0] != fmt.Sprintf("Store %d", store) || rows[1][1] != strconv.Itoa(store*100) {
			t.Errorf("the mail to %s attaches %q, want only store %d", address, rows, store)
		}
	}
	aud := run["audience"].(map[string]any)
	if run["state"] != "delivered" || run["skipped"] != 1.0 || aud["rows"] != 1001.0 || aud["recipients"] != 1000.0 || aud["slices"] != 10.0 {
		t.Errorf("the run: state %v skipped %v audience %v", run["state"], run["skipped"], aud)
	}
	if s := fmt.Sprint(aud["skips"]); !strings.Contains(s, "not an address") || !strings.Contains(s, "e-mail address") {
		t.Errorf("the skipped row: %s", s)
	}
	// Each store's report was executed and its CSV rendered once: the run's
	// files are one per store.
	if files := run["attachments"].([]any); len(files) != 10 {
		t.Errorf("the run attaches %d files, want one per store: %v", len(files), files)
	}
	recipients := w.admin.do("GET", sub+"/recipients?limit=5", "").json(t)["recipients"].(map[string]any)
	if recipients["total"] != 1000.0 || recipients["slices"] != 10.0 || recipients["skipped"] != 1.0 || len(recipients["items"].([]any)) != 5 {
		t.Errorf("the subscription's recipients: %v", recipients)
	}
	preview := w.admin.do("POST", sub+"/preview?recipient=m0003@example.com", "").json(t)["preview"].(map[string]any)
	if !strings.Contains(preview["text"].(string), "Sales: 400.00") || preview["recipient"] != "m0003@example.com" {
		t.Errorf("the preview as m0003@example.com: %v", preview)
	}
}

// TestBurstHonoursRecipientVerification: with recipient verification on, a
// burst sends to addresses of the trusted domains only (or confirmed ones),
// and counts the others as skipped: addresses from data are no way around it.
func TestBurstHonoursRecipientVerification(t *testing.T) {
	gate.Parallel(t)
	w := newBurstWorld(t, 2, []string{"ann@example.com,s1", "eve@elsewhere.test,s2"}, func(c *app.Config) {
		c.PublicURL = publicURL
		c.Delivery.VerifyRecipients = true
		c.Delivery.TrustedDomains = []string{"example.com"}
	})
	sub := w.subscribe(t, 201, nil)
	run, mails := w.fire(t, sub, 1)
	if len(mails) != 1 || mails[0].To[0] != "ann@example.com" || run["skipped"] != 1.0 {
		t.Fatalf("mails to %v, run skipped %v", mails, run["skipped"])
	}
	if s := fmt.Sprint(dig(run, "audience", "skips")); !strings.Contains(s, "eve@elsewhere.test") || !strings.Contains(s, "confirmed") {
		t.Errorf("the skip: %s", s)
	}
}
