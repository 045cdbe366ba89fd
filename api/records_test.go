package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// TestRecordsKeepTheirBytes: a subscription and a channel configuration are
// answered byte for byte as the API has always written them, keys in their
// order, HTML characters escaped, every optional part present or absent as
// before.
func TestRecordsKeepTheirBytes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	full := store.Subscription{ID: "s1", ProjectID: "p1", Owner: "u1", Title: "Revenue <&> watch", Enabled: true,
		Channels: []string{"c1", "c2"}, Paused: map[string]store.Pause{"c2": {By: "a@x.io", At: at.Add(time.Minute)}},
		Created: at, Updated: at.Add(time.Hour),
		Def: store.SubscriptionDef{
			Triggers:    []store.Trigger{{Cron: "0 0 8 * * MON-FRI", Timezone: "Europe/Prague"}, {Cron: "0 0/5 * * * *", Timezone: "UTC"}},
			Condition:   "f:executeMetric('/svc/md/p1/obj/12') < 16",
			Message:     "Revenue fell to ${f:executeMetric('/svc/md/p1/obj/12')}",
			MessageHTML: "<b>${f:executeMetric('/svc/md/p1/obj/12')}</b>",
			Subject:     "Revenue", Resolved: "All clear", FireMode: store.FireOnChange,
			Attachments: []store.ReportAttachment{{Report: "/svc/md/p1/obj/40", Formats: []string{"PDF", "XLS"}, NewRowsBy: "/svc/md/p1/obj/7"},
				{Report: "/svc/md/p1/obj/41", Formats: []string{"CSV"}}},
			Recipients: &store.Recipients{Users: []string{"u2"}, Roles: []string{"editorRole", "nosuchRole"},
				Via: []store.Via{{Kind: "email"}, {Kind: "sms", Channel: "c1"}}},
			Burst:   &store.Burst{Report: "/svc/md/p1/obj/50", Address: "/svc/md/p1/obj/51", By: "/svc/md/p1/obj/52", Via: store.Via{Kind: "email"}},
			OnEmpty: store.OnEmptySkip, SendWhen: store.SendChanged,
		}}
	bare := store.Subscription{ID: "s2", ProjectID: "p1", Owner: "u1", Title: "Bare", Created: at, Updated: at,
		Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: "0 * * * * *"}}, Condition: "true", Message: "m",
			FireMode: store.FireAlways}}
	kinds := channels.MustRegistry(email.Descriptor)
	s := &Server{notify: notify.New(nil, notify.DefaultConfig(), notify.Options{Kinds: kinds})}
	ch := store.Channel{ID: "c1", Owner: "u1", Kind: "email", Title: "Mail", Config: json.RawMessage(`{ "to": "a@x.io" }`),
		Created: at, Updated: at}
	odd := store.Channel{ID: "c9", Owner: "u1", Kind: "gone", Title: "Gone", Created: at, Updated: at}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"full subscription", subscriptionRecord(full, notify.Health{Healthy: false, FailuresInARow: 3}),
			`{"subscription":{"attachments":[{"formats":["PDF","XLS"],"newRowsBy":"/svc/md/p1/obj/7","report":"/svc/md/p1/obj/40"},` +
				`{"formats":["CSV"],"report":"/svc/md/p1/obj/41"}],` +
				`"burst":{"address":"/svc/md/p1/obj/51","by":"/svc/md/p1/obj/52","report":"/svc/md/p1/obj/50","via":"email"},` +
				`"channels":["/svc/account/profile/u1/channelConfigurations/c1","/svc/account/profile/u1/channelConfigurations/c2"],` +
				`"condition":{"condition":{"expression":"f:executeMetric('/svc/md/p1/obj/12') \u003c 16"}},"enabled":true,"fireMode":"onChange",` +
				`"health":{"failuresInARow":3,"healthy":false},` +
				`"message":{"html":{"expression":"\u003cb\u003e${f:executeMetric('/svc/md/p1/obj/12')}\u003c/b\u003e"},"template":{"expression":"Revenue fell to ${f:executeMetric('/svc/md/p1/obj/12')}"}},` +
				`"meta":{"author":"/svc/account/profile/u1","category":"subscription","created":"2026-01-02 10:00:00","title":"Revenue \u003c\u0026\u003e watch","updated":"2026-01-02 11:00:00","uri":"/svc/projects/p1/users/u1/subscriptions/s1"},` +
				`"onEmpty":"skip","pausedChannels":[{"channel":"/svc/account/profile/u1/channelConfigurations/c2","by":"a@x.io","at":"2026-01-02 10:01:00"}],` +
				`"recipients":{"roles":["/svc/projects/p1/roles/5"],"users":["/svc/account/profile/u2"],"via":["email","/svc/account/profile/u1/channelConfigurations/c1"]},` +
				`"resolvedMessage":{"template":{"expression":"All clear"}},"sendWhen":"changed","subject":{"template":{"expression":"Revenue"}},` +
				`"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * MON-FRI","timezone":"Europe/Prague"}},{"timerEvent":{"cronExpression":"0 0/5 * * * *","timezone":"UTC"}}]}}`},
		{"bare subscription", subscriptionRecord(bare, notify.Health{Healthy: true}),
			`{"subscription":{"attachments":[],"channels":[],"condition":{"condition":{"expression":"true"}},"enabled":false,"fireMode":"always",` +
				`"health":{"failuresInARow":0,"healthy":true},"message":{"template":{"expression":"m"}},` +
				`"meta":{"author":"/svc/account/profile/u1","category":"subscription","created":"2026-01-02 10:00:00","title":"Bare","updated":"2026-01-02 10:00:00","uri":"/svc/projects/p1/users/u1/subscriptions/s2"},` +
				`"onEmpty":"send","sendWhen":"always","triggers":[{"timerEvent":{"cronExpression":"0 * * * * *","timezone":""}}]}}`},
		{"channel", s.channelJSON(ch, "verified"),
			`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"a@x.io"}},` +
				`"meta":{"author":"/svc/account/profile/u1","category":"channelConfiguration","created":"2026-01-02 10:00:00","title":"Mail","updated":"2026-01-02 10:00:00","uri":"/svc/account/profile/u1/channelConfigurations/c1"},` +
				`"verification":"verified"}}`},
		{"channel of an unknown kind", s.channelJSON(odd, ""),
			`{"channelConfiguration":{"configuration":{"goneConfiguration":null},` +
				`"meta":{"author":"/svc/account/profile/u1","category":"channelConfiguration","created":"2026-01-02 10:00:00","title":"Gone","updated":"2026-01-02 10:00:00","uri":"/svc/account/profile/u1/channelConfigurations/c9"}}}`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
