package api

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestReferencesNameTheFieldTheyRefuse: a channel configuration's kind and
// a subscription's references (channels, paused channels, members, roles,
// ways to reach them) are refused with the field's path and the words users
// have always read, whether the API translates them or the rules refuse them.
func TestReferencesNameTheFieldTheyRefuse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	me, other := profileURI(f.uids[editor]), profileURI(f.uids[viewer])
	mine := me + "/channelConfigurations/" + f.cid
	sub := func(extra string) string {
		return `{"subscription":{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * *"}}],` +
			`"condition":{"condition":{"expression":"true"}},"message":{"template":{"expression":"hi"}},` +
			`"meta":{"title":"T"}` + extra + `}}`
	}
	const chanForm = "/svc/account/profile/<user id>/channelConfigurations/<id>"
	subs := projectURI(f.pid) + "/users/" + f.uids[editor] + "/subscriptions"
	for _, c := range []struct{ path, body, want string }{
		{subs, `{"subscription":null}`, "Field subscription is required"},
		{subs, sub(`,"channels":["` + mine + `","/svc/account/profile/x"]`),
			"Field subscription.channels[1] must be a channel configuration URI " + chanForm},
		{subs, sub(`,"channels":["` + other + `/channelConfigurations/` + f.cid + `"]`),
			"Field subscription.channels[0] names no channel configuration of the subscription's user"},
		{subs, sub(`,"channels":["` + me + `/channelConfigurations/abc123"]`),
			"Field subscription.channels[0] names no channel configuration of the subscription's user"},
		{subs, sub(`,"channels":["` + mine + `","` + mine + `"]`), "Field subscription.channels[1] names a channel twice"},
		{subs, sub(`,"channels":[]`),
			"Field subscription.channels must name at least one channel configuration, unless the subscription has recipients or a burst"},
		{subs, sub(`,"channels":["` + mine + `"],"pausedChannels":[{"channel":"` + other + `/channelConfigurations/` + f.cid + `"}]`),
			"Field subscription.pausedChannels[0].channel must be one of the subscription's channels"},
		{subs, sub(`,"channels":["` + mine + `"],"pausedChannels":[{"channel":"` + me + `/channelConfigurations/abc"}]`),
			"Field subscription.pausedChannels[0].channel must be one of the subscription's channels"},
		{subs, sub(`,"recipients":{"users":["/svc/projects/` + f.pid + `"]}`),
			"Field subscription.recipients.users[0] must be a profile URI /svc/account/profile/<user id>"},
		{subs, sub(`,"recipients":{"users":["/svc/account/profile/nobody"]}`),
			"Field subscription.recipients.users[0] is not an enabled member of the project"},
		{subs, sub(`,"recipients":{"roles":["/svc/projects/other/roles/3"]}`),
			"Field subscription.recipients.roles[0] must be a role URI of this project, /svc/projects/" + f.pid + "/roles/<id>"},
		{subs, sub(`,"recipients":{"roles":["/svc/projects/` + f.pid + `/roles/99"]}`),
			"Field subscription.recipients.roles[0] must be a role URI of this project, /svc/projects/" + f.pid + "/roles/<id>"},
		{subs, sub(`,"recipients":{"roles":["/svc/projects/` + f.pid + `/roles/3"],"via":["pigeon"]}`),
			"Field subscription.recipients.via[0] must be email or the URI of one of your channels, " + chanForm},
		{subs, sub(`,"recipients":{"roles":["/svc/projects/` + f.pid + `/roles/3"],"via":["email","` + other + `/channelConfigurations/c1"]}`),
			"Field subscription.recipients.via[1] names no channel configuration of the subscription's user"},
		{subs, sub(`,"recipients":{"roles":["/svc/projects/` + f.pid + `/roles/3"]},"burst":{"report":"r"}`),
			"Field subscription.burst a subscription has recipients or a burst, not both"},
		{subs, sub(`,"burst":{"report":"/svc/md/x/obj/1","address":"a","by":"b"}`),
			"Field subscription.burst.report must be a report URI of this project, /svc/md/" + f.pid + "/obj/<id>"},
		{subs, sub(`,"channels":["` + mine + `"],"attachments":[{"report":"/svc/md/` + f.pid + `/obj/x y","formats":["PDF"]}]`),
			"Field subscription.attachments[0].report must be a report URI of this project, /svc/md/" + f.pid + "/obj/<id>"},
		{subs, sub(`,"channels":["` + mine + `"],"message":{"template":{"expression":"hi"},"html":{}}`),
			"Field subscription.message.html.expression must not be empty; leave html out to show the text message"},
		{subs, sub(`,"channels":["` + mine + `"],"subject":{"html":{"expression":"x"}}`),
			"Field subscription.subject.html is not allowed: a subject is plain text"},
		{me + "/channelConfigurations", `{"channelConfiguration":null}`, "Field channelConfiguration is required"},
		{me + "/channelConfigurations", `{"channelConfiguration":{"configuration":{},"meta":{"title":"t"}}}`,
			"Field channelConfiguration.configuration must hold exactly one of emailConfiguration"},
		{me + "/channelConfigurations", `{"channelConfiguration":{"configuration":{"pigeonConfiguration":{}},"meta":{"title":"t"}}}`,
			"Field channelConfiguration.configuration must hold exactly one of emailConfiguration; pigeonConfiguration is none of them"},
		{me + "/channelConfigurations", `{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"a@b.c"}}}}`,
			"Field channelConfiguration.meta.title is required"},
		{me + "/channelConfigurations", `{"channelConfiguration":{"configuration":{"emailConfiguration":[1]},"meta":{"title":"t"}}}`,
			"Field channelConfiguration.configuration.emailConfiguration must be a JSON object"},
		{me + "/channelConfigurations", `{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"x"}},"meta":{"title":"t"}}}`,
			"Field channelConfiguration.configuration.emailConfiguration.to must be one e-mail address such as jane@example.com"},
	} {
		status, body := f.do(t, editor, http.MethodPost, c.path, "application/json", c.body)
		var e errorBody
		_ = json.Unmarshal([]byte(body), &e)
		if got := errMessage(body); status != http.StatusBadRequest || got != c.want || e.Error.ErrorClass != "User" {
			t.Errorf("%s:\n got %d %s\nwant 400 %s", c.body, status, got, c.want)
		}
	}
}

// TestStrangersBodyIsRefusedAsAStrangers: a body for a user who is not an
// enabled member of the project is refused as theirs (403) before any of its
// references is read, even one naming another user's channel.
func TestStrangersBodyIsRefusedAsAStrangers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body := `{"subscription":{"channels":["` + profileURI(f.uids[editor]) + `/channelConfigurations/` + f.cid + `"],"meta":{"title":"T"}}}`
	path := projectURI(f.pid) + "/users/" + f.uids[tenant] + "/subscriptions"
	status, resp := f.do(t, domainAdmin, http.MethodPost, path, "application/json", body)
	if status != http.StatusForbidden {
		t.Errorf("a stranger's subscription: %d %s, want 403", status, errMessage(resp))
	}
}
