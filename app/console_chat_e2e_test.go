package app_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/googlechat"
	"github.com/heraldhq/herald/channels/webhook"
)

// TestConsoleChannelFormHasTheChatKinds: the console's channel form, which
// reads the kinds from the registry, offers Microsoft Teams and Google Chat
// with their URL as a write-only field, and a webhook's body template as a
// box of several lines. A Teams channel saved through the form is listed by
// its workflow's host, never its URL; a template that is not JSON is shown
// at its field with its line and column.
func TestConsoleChannelFormHasTheChatKinds(t *testing.T) {
	gate.Long(t)
	ctx := apptest.Chrome(t)
	teams := channeltest.NewTeamsServer(t)
	b := apptest.Start(t, func(c *app.Config) {
		c.Channels["webhook"].(*webhook.Settings).AllowNetworks = []string{"127.0.0.0/8"}
		c.Channels["googleChat"].(*googlechat.Settings).BaseURL = "http://127.0.0.1:1"
	})
	br := &tab{t: t, ctx: ctx, base: b.URL, dir: t.ArtifactDir()}
	br.open("/console/login")
	br.submit(map[string]string{"#login": b.Config.AdminLogin, "#password": apptest.AdminPassword}, "button[type=submit]", "header nav")

	br.open("/console/channels/new")
	kinds := br.text(".kinds")
	if !strings.Contains(kinds, "Microsoft Teams") || !strings.Contains(kinds, "Google Chat") {
		t.Fatalf("the form offers %q", kinds)
	}
	for _, sel := range []string{"input[name='teamsConfiguration.url'][type=password]", "input[name='googleChatConfiguration.url'][type=password]",
		"textarea[name='webhookConfiguration.template']"} {
		if !js[bool](br, `!!document.querySelector(`+quoteJS(sel)+`)`) {
			t.Errorf("the form has no %s", sel)
		}
	}

	br.do("choose Teams", chromedp.Click(`input[data-kind="teamsConfiguration"]`))
	br.shoot("channel-teams")
	br.submit(map[string]string{"#title": "Team room", "input[name='teamsConfiguration.url']": teams.URL()},
		"form.form button[type=submit]", ".notice")
	list := br.text("table.list")
	if !strings.Contains(list, "Microsoft Teams") || !strings.Contains(list, teams.Host()) || strings.Contains(list, "workflows") {
		t.Errorf("the list shows %q", list)
	}

	br.open("/console/channels/new")
	br.do("choose the webhook", chromedp.Click(`input[data-kind="webhookConfiguration"]`))
	br.submit(map[string]string{"#title": "Chat hook", "input[name='webhookConfiguration.url']": "http://127.0.0.1:1/hook",
		"input[name='webhookConfiguration.secret']": "whsec-1", "textarea[name='webhookConfiguration.template']": "{\"a\": ${subject} ${text}}"},
		"form.form button[type=submit]", ".field-error")
	if e := br.text(".field-error"); !strings.Contains(e, "line 1, column 18") {
		t.Errorf("the template's error says %q", e)
	}
	br.shoot("channel-template-error")
}
