package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// fakeBursts refuses the label 99 as a burst's address.
type fakeBursts struct{}

func (fakeBursts) CheckBurst(_ context.Context, _, _, address, _ string) (string, string, error) {
	if strings.HasSuffix(address, "/99") {
		return "address", "is not a label the report shows in its rows", nil
	}
	return "", "", nil
}

// allDates takes every attribute for a date attribute (newRowsBy).
type allDates struct{}

func (allDates) IsDate(context.Context, string, string) (bool, error) { return true, nil }

// audienceFixture is the fixture with a report (/svc/md/p1/obj/1), a second
// member u2, a stranger u3, an SMS channel of u1's (c1) and u3's e-mail
// channel (c3), and a service that checks bursts with fakeBursts.
func audienceFixture(t testing.TB) (*fixture, *notify.Service) {
	t.Helper()
	fx := newFixture(t)
	ctx := context.Background()
	for _, id := range []string{"u2", "u3"} {
		must(t, fx.st.CreateUser(ctx, store.User{ID: id, Domain: "default", Login: id + "@example.com", PasswordHash: "x", Created: t0, Updated: t0}))
	}
	res, err := fx.st.ApplyMemberChanges(ctx, "p1", store.RoleAdmin,
		[]store.MemberChange{{UserID: "u2", Status: store.MemberEnabled, Roles: []string{notify.RoleViewer}, Add: true}}, t0)
	must(t, err)
	must(t, res[0])
	_, err = fx.st.CreateObject(ctx, store.Object{ProjectID: "p1", Category: "report", Identifier: "r", Title: "R", Content: []byte("{}"),
		Author: "u1", Contributor: "u1", Created: t0, Updated: t0}, nil)
	must(t, err)
	_, err = fx.st.CreateObject(ctx, store.Object{ProjectID: "p1", Category: "metric", Identifier: "m", Title: "M", Content: []byte("{}"),
		Author: "u1", Contributor: "u1", Created: t0, Updated: t0}, nil)
	must(t, err)
	must(t, fx.st.CreateChannel(ctx, store.Channel{ID: "c1", Owner: "u1", Kind: "sms", Title: "SMS",
		Config: []byte(`{"username":"AC1","from":"+15005550006","to":"+420601234567"}`), Created: t0, Updated: t0}, store.Quota{}))
	must(t, fx.st.CreateChannel(ctx, store.Channel{ID: "c3", Owner: "u3", Kind: "email", Title: "Mail",
		Config: []byte(`{"to":"u3@example.com"}`), Created: t0, Updated: t0}, store.Quota{}))
	kinds := channels.MustRegistry(email.Descriptor, sms.Descriptor)
	settings := map[channels.Kind]channels.Settings{}
	for _, d := range kinds.All() {
		settings[d.Kind] = d.Settings()
	}
	svc := notify.New(fx.st, notify.DefaultConfig(), notify.Options{Kinds: kinds, Settings: settings, Box: fx.box,
		Clock: clock.NowFrom(func() time.Time { return t0 }), Bursts: fakeBursts{}, Dates: allDates{}})
	return fx, svc
}

// audienceBody is a subscription without channels, with the given recipients or burst.
func audienceBody(t testing.TB, extra string) notify.SubscriptionInput {
	t.Helper()
	return subInput(audienceWire(t, extra))
}

// audienceWire is audienceBody in its wire shape.
func audienceWire(t testing.TB, extra string) *wire.Subscription {
	t.Helper()
	var body wire.Subscription
	doc := `{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * *"}}],"condition":{"condition":{"expression":"true"}},` +
		`"message":{"template":{"expression":"hi"}},"meta":{"title":"T"}` + extra + `}`
	if err := json.Unmarshal([]byte(doc), &body); err != nil {
		t.Fatal(err)
	}
	return &body
}

// TestAudienceNamesTheFieldItRefuses: recipients and bursts are checked when
// the subscription is saved, each refusal naming its field.
func TestAudienceNamesTheFieldItRefuses(t *testing.T) {
	t.Parallel()
	_, svc := audienceFixture(t)
	const (
		u   = "/svc/account/profile/"
		sms = "/svc/account/profile/u1/channelConfigurations/c1"
	)
	for extra, field := range map[string]string{
		`,"recipients":{"users":["` + u + `u2"]},"burst":{"report":"/svc/md/p1/obj/1"}`: "subscription.burst",
		`,"recipients":{}`: "subscription.recipients",
		`,"recipients":{"users":["` + u + `u2","` + u + `u3"]}`:                                                              "subscription.recipients.users[1]",
		`,"recipients":{"users":["` + u + `u2","` + u + `u2"]}`:                                                              "subscription.recipients.users[1]",
		`,"recipients":{"users":["/svc/projects/p1"]}`:                                                                       "subscription.recipients.users[0]",
		`,"recipients":{"roles":["/svc/projects/p2/roles/3"]}`:                                                               "subscription.recipients.roles[0]",
		`,"recipients":{"users":["` + u + `u2"],"via":["sms"]}`:                                                              "subscription.recipients.via[0]",
		`,"recipients":{"users":["` + u + `u2"],"via":["email","` + u + `u3/channelConfigurations/c3"]}`:                     "subscription.recipients.via[1]",
		`,"recipients":{"users":["` + u + `u2"]},"fireMode":"onChange"`:                                                      "subscription.fireMode",
		`,"burst":{"report":"/svc/md/p2/obj/1","address":"/svc/md/p1/obj/2","by":"/svc/md/p1/obj/3"}`:                        "subscription.burst.report",
		`,"burst":{"report":"/svc/md/p1/obj/1","address":"x","by":"/svc/md/p1/obj/3"}`:                                       "subscription.burst.address",
		`,"burst":{"report":"/svc/md/p1/obj/1","address":"/svc/md/p1/obj/99","by":"/svc/md/p1/obj/3"}`:                       "subscription.burst.address",
		`,"burst":{"report":"/svc/md/p1/obj/1","address":"/svc/md/p1/obj/2","by":"/svc/md/p1/obj/3","via":"carrier pigeon"}`: "subscription.burst.via",
		`,"burst":{"report":"/svc/md/p1/obj/7","address":"/svc/md/p1/obj/2","by":"/svc/md/p1/obj/3"}`:                        "subscription.burst.report",
	} {
		_, err := svc.CreateSubscription(context.Background(), "p1", "u1", audienceBody(t, extra))
		var de *notify.Error
		if !errors.As(err, &de) || de.Code != notify.Invalid || de.Field != field {
			t.Errorf("%s: %v, want %s named", extra, err, field)
		}
	}
	// What is remembered per subscription or channel, not per recipient,
	// goes with neither recipients nor a burst.
	const burst = `,"burst":{"report":"/svc/md/p1/obj/1","address":"/svc/md/p1/obj/2","by":"/svc/md/p1/obj/3"}`
	for extra, field := range map[string]string{
		`,"recipients":{"users":["` + u + `u2"]},"sendWhen":"changed"`: "subscription.sendWhen",
		burst + `,"sendWhen":"changed"`:                                "subscription.sendWhen",
		`,"recipients":{"users":["` + u + `u2"]},"attachments":[{"report":"/svc/md/p1/obj/1","formats":["CSV"]},` +
			`{"report":"/svc/md/p1/obj/1","formats":["CSV"],"newRowsBy":"/svc/md/p1/obj/9"}]`: "subscription.attachments[1].newRowsBy",
		burst + `,"message":{"template":{"expression":"was ${f:previous('/svc/md/p1/obj/2')}"}}`: "subscription.message.template.expression",
	} {
		_, err := svc.CreateSubscription(context.Background(), "p1", "u1", audienceBody(t, extra))
		var de *notify.Error
		if !errors.As(err, &de) || de.Code != notify.Invalid || de.Field != field || !strings.Contains(err.Error(), "not per recipient") {
			t.Errorf("%s: %v, want %s named as not per recipient", extra, err, field)
		}
	}
	for extra, want := range map[string]string{
		`,"recipients":{"users":["` + u + `u2"],"roles":["/svc/projects/p1/roles/5"]}`: `{"users":["u2"],"roles":["editorRole"],"via":[{"kind":"email"}]}`,
		`,"recipients":{"users":["` + u + `u2"],"via":["email","` + sms + `"]}`:        `{"users":["u2"],"via":[{"kind":"email"},{"kind":"sms","channel":"c1"}]}`,
	} {
		sub, err := svc.CreateSubscription(context.Background(), "p1", "u1", audienceBody(t, extra))
		if err != nil {
			t.Fatalf("%s: %v", extra, err)
		}
		if got, _ := json.Marshal(sub.Def.Recipients); string(got) != want || len(sub.Channels) != 0 {
			t.Errorf("%s: recipients %s, want %s", extra, got, want)
		}
	}
	sub, err := svc.CreateSubscription(context.Background(), "p1", "u1",
		audienceBody(t, `,"burst":{"report":"/svc/md/p1/obj/1","address":"/svc/md/p1/obj/2","by":"/svc/md/p1/obj/3","via":"`+sms+`"}`))
	if err != nil || sub.Def.Burst == nil || sub.Def.Burst.Via != (store.Via{Kind: "sms", Channel: "c1"}) {
		t.Errorf("a burst by SMS: %+v, %v", sub.Def.Burst, err)
	}
}

// FuzzSubscriptionAudience feeds arbitrary recipients and bursts to
// CreateSubscription: each is stored, or refused as invalid with a field
// path; never a panic, never another error.
func FuzzSubscriptionAudience(f *testing.F) {
	for _, s := range []string{
		`{"users":["/svc/account/profile/u2"],"via":["email"]}`,
		`{"roles":["/svc/projects/p1/roles/3"],"via":["/svc/account/profile/u1/channelConfigurations/c1"]}`,
		`{"users":[""],"roles":[""],"via":[""]}`,
		`{"users":null}`,
	} {
		f.Add([]byte(s), []byte(`null`))
	}
	f.Add([]byte(`null`), []byte(`{"report":"/svc/md/p1/obj/1","address":"/svc/md/p1/obj/2","by":"/svc/md/p1/obj/3"}`))
	f.Add([]byte(`null`), []byte(`{"report":"","via":"sms"}`))
	_, svc := audienceFixture(f)
	f.Fuzz(func(t *testing.T, recipients, burst []byte) {
		body := audienceWire(t, "")
		if json.Unmarshal(recipients, &body.Recipients) != nil || json.Unmarshal(burst, &body.Burst) != nil {
			return
		}
		_, err := svc.CreateSubscription(context.Background(), "p1", "u1", subInput(body))
		var de *notify.Error
		if err != nil && (!errors.As(err, &de) || de.Code != notify.Invalid || de.Field == "") {
			t.Fatalf("%s %s: %v", recipients, burst, err)
		}
	})
}
