package app_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/sms"
)

// TestRecipientsBySMSGetTheirOwnSlice: members reached by SMS, through an
// SMS channel of the owner's, get the revenue of their own region at their
// profile's phone number, sent with the owner's account; a member with no
// phone number is skipped, saying so.
func TestRecipientsBySMSGetTheirOwnSlice(t *testing.T) {
	gate.Parallel(t)
	tw := channeltest.NewTwilioServer(t)
	w := newPermWorld(t, func(c *app.Config) { c.Channels["sms"].(*sms.Settings).BaseURL = tw.URL() })
	r := w.do(t, w.admin, "POST", w.b.AdminProfile+"/channelConfigurations", `{"channelConfiguration":{"configuration":{"smsConfiguration":`+
		`{"username":"`+tw.AccountSID()+`","password":"`+tw.AuthToken()+`","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"Phone"}}}`)
	wantStatus(t, r, 201)
	channel := dig(r.json(t), "channelConfiguration", "meta", "uri").(string)

	phones := map[string]string{"dee": "+420777000111", "fay": "+420777000222"}
	filters := map[string][]string{"dee": {w.filters["North"]}, "fay": {w.filters["West"]}}
	users := []any{w.uris["ann"]} // ann has no phone number
	for name, phone := range phones {
		r := w.do(t, w.admin, "POST", "/svc/account/domains/"+w.b.Config.Domain+"/users", jsonString(map[string]any{"accountSetting": map[string]any{
			"login": name + "@example.com", "password": "S3cret-pass", "verifyPassword": "S3cret-pass", "firstName": name, "lastName": "Lee",
			"phoneNumber": phone}}))
		wantStatus(t, r, 201)
		w.uris[name] = r.json(t)["uri"].(string)
		wantStatus(t, w.do(t, w.admin, "POST", "/svc/projects/"+w.m.pid+"/users", `{"user":{"content":{"status":"ENABLED","userRoles":["/svc/projects/`+
			w.m.pid+`/roles/3"]},"links":{"self":"`+w.uris[name]+`"}}}`), 200)
		users = append(users, w.uris[name])
	}
	w.assign(t, filters)
	sub := w.subscribe(t, 201, map[string]any{"attachments": []any{},
		"recipients": map[string]any{"users": users, "via": []any{channel}}})
	run, _ := w.fire(t, sub, 1, 0)
	waitFor(t, func() bool { return len(tw.Messages()) >= 2 })
	got := map[string]string{}
	for _, m := range tw.Messages() {
		got[m.To] = m.Body
		if m.AccountSID != tw.AccountSID() || m.From != "+15005550006" {
			t.Errorf("an SMS from %s of %s, want the owner's channel's", m.From, m.AccountSID)
		}
	}
	for name, region := range map[string]string{"dee": "North", "fay": "West"} {
		want := fmt.Sprintf("Revenue: %.2f", regionTotals[region])
		if region == "West" {
			want = "Revenue: 1,001.00"
		}
		if body := got[phones[name]]; !strings.Contains(body, want) {
			t.Errorf("the SMS to %s (%s): %q, want %q", name, phones[name], body, want)
		}
	}
	if len(got) != 2 || run["skipped"] != 1.0 || !strings.Contains(fmt.Sprint(dig(run, "audience", "skips")), "no phone number") {
		t.Errorf("SMS to %v; the run skipped %v: %v", got, run["skipped"], dig(run, "audience", "skips"))
	}
}
