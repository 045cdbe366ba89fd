package app_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/numfmt"
	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/googlechat"
	"github.com/heraldhq/herald/channels/webhook"
)

// chatDemo is the demo running with a public URL, its admin logged in.
type chatDemo struct {
	b     *apptest.Bundle
	admin *browser
}

func startChatDemo(t *testing.T, opt func(c *app.Config)) *chatDemo {
	t.Helper()
	b := apptest.StartDemo(t, func(c *app.Config) {
		c.PublicURL = publicURL
		opt(c)
	})
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	return &chatDemo{b: b, admin: admin}
}

// addChannel saves a channel whose secret is its URL and checks that no
// answer shows more of it than host: not at its creation, not when it is
// read, and not after a PUT of what the GET showed, which keeps the URL.
// It returns the channel's URI.
func (d *chatDemo) addChannel(t *testing.T, wire, url, host string) string {
	t.Helper()
	secret := url[strings.Index(url, "/v")+1:] // the path and the query
	r := d.admin.do("POST", d.b.AdminProfile+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"`+wire+`":`+
		`{"url":"`+url+`"}},"meta":{"title":"Team room"}}}`)
	wantStatus(t, r, 201)
	uri := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	got := d.admin.do("GET", uri, "")
	wantStatus(t, got, 200)
	for _, body := range []string{r.body, got.body} {
		if strings.Contains(body, secret) || !strings.Contains(body, `"`+wire+`":{"host":"`+host+`"}`) {
			t.Fatalf("the channel shows %s", body)
		}
	}
	wantStatus(t, d.admin.do("PUT", uri, got.body), 200)
	if again := d.admin.do("GET", uri, ""); again.body != got.body {
		t.Fatalf("a PUT of what GET showed changed the channel: %s, was %s", again.body, got.body)
	}
	return uri
}

// subscribe adds the channel to the demo's subscription, which sends the
// revenue and the "Revenue by region" report as a PDF every minute, and
// returns the subscription's URI.
func (d *chatDemo) subscribe(t *testing.T, channel string) string {
	t.Helper()
	pid := demoProject.FindStringSubmatch(d.b.Stdout.String())[1]
	subs := d.admin.do("GET", "/svc/projects/"+pid+"/users/"+uid(d.b.AdminProfile)+"/subscriptions", "").json(t)
	sub := subs["subscriptions"].(map[string]any)["items"].([]any)[0].(map[string]any)
	s := sub["subscription"].(map[string]any)
	s["channels"] = append(s["channels"].([]any), channel)
	uri := s["meta"].(map[string]any)["uri"].(string)
	wantStatus(t, d.admin.do("PUT", uri, jsonString(sub)), 200)
	return uri
}

// wantRegions checks that rows hold every region of the demo with its
// revenue in the metric's format.
func wantRegions(t *testing.T, rows string) {
	t.Helper()
	_, byRegion := demoRevenue(t)
	regions := demoRegions(t)
	for id, revenue := range byRegion {
		if cell := numfmt.Format(revenue, "#,##0.00"); !strings.Contains(rows, regions[id]) || !strings.Contains(rows, cell) {
			t.Errorf("the card lacks %s with %s: %s", regions[id], cell, rows)
		}
	}
}

// wantPDF follows a card's link to the report and checks it downloads the
// PDF without a login.
func (d *chatDemo) wantPDF(t *testing.T, link string) {
	t.Helper()
	status, h, data := anonymous(t, d.b.URL, "GET", follow(t, link), "")
	if status != 200 || !bytes.HasPrefix(data, []byte("%PDF-")) || h.Get("Content-Type") != "application/pdf" {
		t.Errorf("the card's link answers %d %q, %d bytes", status, h.Get("Content-Type"), len(data))
	}
}

// TestTeamsDeliversTheDemoReport: a Teams channel (its workflow URL the
// secret, plain http to loopback admitted by webhook.allowNetworks) passes
// its test and, added to the demo's subscription, gets an Adaptive Card the fake workflow takes:
// the message, the revenue as a fact, the report's table with every region
// and its revenue in the metric's format, and an "Open" action that
// downloads the PDF. The run is delivered.
func TestTeamsDeliversTheDemoReport(t *testing.T) {
	gate.Parallel(t)
	srv := channeltest.NewTeamsServer(t)
	d := startChatDemo(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
	})
	const path = "channelConfiguration.configuration.teamsConfiguration.url"
	for _, url := range []string{"https://169.254.169.254/workflows/x", "http://localhost/x", "ftp://flows.example.com/"} {
		r := d.admin.do("POST", d.b.AdminProfile+"/channelConfigurations",
			`{"channelConfiguration":{"configuration":{"teamsConfiguration":{"url":"`+url+`"}},"meta":{"title":"T"}}}`)
		if wantStatus(t, r, 400); r.errorBody(t)["parameters"].([]any)[0] != path {
			t.Errorf("%s: %s does not name %s", url, r.body, path)
		}
	}
	channel := d.addChannel(t, "teamsConfiguration", srv.URL(), srv.Host())
	// A test of the channel goes through the same sender, with the kept URL.
	if ct := channelTest(t, d.admin.do("POST", channel+"/test", "")); ct["accepted"] != true || ct["providerId"] == "" {
		t.Fatalf("the channel's test: %v (refused: %v)", ct, srv.Refused())
	}
	if c := srv.Cards(); len(c) != 1 || c[0].Texts[0] != "Test message from Herald" {
		t.Fatalf("the test's card: %+v", c)
	}
	sub := d.subscribe(t, channel)
	d.b.Clock.Advance(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cards, err := srv.Await(ctx, 2)
	if err != nil {
		t.Fatalf("%v (refused: %v)", err, srv.Refused())
	}
	c := cards[1]
	if texts := strings.Join(c.Texts, "\n"); !strings.Contains(texts, "Revenue so far: ") || !strings.Contains(texts, "Revenue by region") {
		t.Errorf("texts = %q", c.Texts)
	}
	if len(c.Facts) != 1 || !strings.HasPrefix(c.Facts[0][0], "/svc/md/") {
		t.Errorf("facts = %q", c.Facts)
	}
	var rows []string
	for _, r := range c.Rows {
		rows = append(rows, strings.Join(r, " | "))
	}
	wantRegions(t, strings.Join(rows, "\n"))
	if len(c.Actions) != 1 || !strings.HasSuffix(c.Actions[0].Title, ".pdf") {
		t.Fatalf("actions = %+v", c.Actions)
	}
	d.wantPDF(t, c.Actions[0].URL)
	waitFor(t, func() bool {
		items := d.admin.do("GET", sub+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["run"].(map[string]any)["state"] == "delivered"
	})
}

// TestGoogleChatDeliversTheDemoReport: a Google Chat channel, its webhook
// URL on chat.googleapis.com sent to googleChat.baseURL (the fake space),
// added to the demo's subscription gets a message the fake takes: the
// subject, a card with the report's regions and their revenue in the
// metric's format, and a button that downloads the PDF, in the
// subscription's thread; the next fire replies in the same thread.
func TestGoogleChatDeliversTheDemoReport(t *testing.T) {
	gate.Parallel(t)
	srv := channeltest.NewGoogleChatServer(t)
	d := startChatDemo(t, func(c *app.Config) {
		c.Channels["googleChat"].(*googlechat.Settings).BaseURL = srv.URL()
	})
	const path = "channelConfiguration.configuration.googleChatConfiguration.url"
	for _, url := range []string{"https://chat.example.com/v1/spaces/A/messages?key=k&token=t",
		"https://chat.googleapis.com/v1/spaces/A/messages?key=k"} {
		r := d.admin.do("POST", d.b.AdminProfile+"/channelConfigurations",
			`{"channelConfiguration":{"configuration":{"googleChatConfiguration":{"url":"`+url+`"}},"meta":{"title":"T"}}}`)
		if wantStatus(t, r, 400); r.errorBody(t)["parameters"].([]any)[0] != path {
			t.Errorf("%s: %s does not name %s", url, r.body, path)
		}
	}
	d.subscribe(t, d.addChannel(t, "googleChatConfiguration", srv.WebhookURL(), "chat.googleapis.com"))
	d.b.Clock.Advance(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := srv.Await(ctx, 1)
	if err != nil {
		t.Fatalf("%v (refused: %v)", err, srv.Refused())
	}
	m := msgs[0]
	if m.Text == "" || !strings.Contains(strings.Join(m.Texts, "\n"), "Revenue so far: ") || m.ReplyOption != googlechat.ReplyOption || m.ThreadKey == "" {
		t.Errorf("message %+v", m)
	}
	var rows []string
	for _, r := range m.Rows {
		rows = append(rows, r[0]+" | "+r[1])
	}
	wantRegions(t, strings.Join(rows, "\n"))
	if len(m.Buttons) != 1 || !strings.HasSuffix(m.Buttons[0].Title, ".pdf") {
		t.Fatalf("buttons = %+v", m.Buttons)
	}
	d.wantPDF(t, m.Buttons[0].URL)
	d.b.Clock.Advance(time.Minute)
	if msgs, err = srv.Await(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if msgs[1].Thread != m.Thread || msgs[1].Repeat {
		t.Errorf("the next fire went to thread %q (repeat %v), the first to %q", msgs[1].Thread, msgs[1].Repeat, m.Thread)
	}
}
