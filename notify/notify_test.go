package notify_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

var t0 = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

// fixture is a store with one project, its owner and a domain service over
// the e-mail and SMS kinds.
type fixture struct {
	st  *store.Store
	svc *notify.Service
	box *secret.Box
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	must(t, st.EnsureDomain(ctx, "default", t0))
	must(t, st.CreateUser(ctx, store.User{ID: "u1", Domain: "default", Login: "u1@example.com", PasswordHash: "x", Created: t0, Updated: t0}))
	must(t, st.CreateProject(ctx, store.Project{ID: "p1", Title: "P", State: store.ProjectEnabled, Author: "u1",
		Contributor: "u1", Created: t0, Updated: t0}, store.RoleAdmin))
	key := make([]byte, 32)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	kinds := channels.MustRegistry(email.Descriptor, sms.Descriptor)
	settings := map[channels.Kind]channels.Settings{}
	for _, d := range kinds.All() {
		settings[d.Kind] = d.Settings()
	}
	svc := notify.New(st, notify.DefaultConfig(), notify.Options{Kinds: kinds, Settings: settings, Box: box,
		Clock: clock.NowFrom(func() time.Time { return t0 })})
	return &fixture{st: st, svc: svc, box: box}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// subInput is the input of a subscription in its wire shape, b: the URIs of
// channels, users and roles made ids as the API makes them, except that a
// URI of no such form is taken as an id, of nothing. The API's translation
// and its refusals are tested in package api.
func subInput(b *wire.Subscription) notify.SubscriptionInput {
	in := notify.SubscriptionInput{OnEmpty: b.OnEmpty, SendWhen: b.SendWhen, FireMode: b.FireMode, Enabled: b.Enabled}
	if b.Meta != nil {
		in.Title = b.Meta.Title
	}
	for _, t := range b.Triggers {
		var ti notify.TriggerInput
		if t.TimerEvent != nil {
			ti = notify.TriggerInput{Cron: t.TimerEvent.CronExpression, Timezone: t.TimerEvent.Timezone}
		}
		in.Triggers = append(in.Triggers, ti)
	}
	if b.Condition != nil && b.Condition.Condition != nil {
		in.Condition = b.Condition.Condition.Expression
	}
	tmpl := func(t *wire.Template) notify.TemplateInput {
		if t == nil {
			return notify.TemplateInput{}
		}
		var out notify.TemplateInput
		if t.Template != nil {
			out.Text = t.Template.Expression
		}
		if t.HTML != nil {
			out.HTML = cmp.Or(t.HTML.Expression, new(""))
		}
		return out
	}
	in.Message, in.Subject, in.Resolved = tmpl(b.Message), tmpl(b.Subject), tmpl(b.ResolvedMessage)
	for _, a := range b.Attachments {
		in.Attachments = append(in.Attachments, notify.AttachmentInput{Report: a.Report, Formats: a.Formats, NewRowsBy: a.NewRowsBy})
	}
	chanID := func(uri string) string {
		if _, cid, ok := wire.ParseChannelURI(uri); ok {
			return cid
		}
		return uri
	}
	for _, c := range b.Channels {
		in.Channels = append(in.Channels, chanID(c))
	}
	if b.PausedChannels != nil {
		ids := []string{}
		for _, p := range *b.PausedChannels {
			ids = append(ids, chanID(p.Channel))
		}
		in.Paused = &ids
	}
	via := func(v string) notify.ViaInput {
		if v == "" || v == notify.ViaEmail {
			return notify.ViaInput{}
		}
		return notify.ViaInput{Channel: chanID(v)}
	}
	if r := b.Recipients; r != nil {
		in.Recipients = &notify.RecipientsInput{}
		for _, u := range r.Users {
			uid, ok := wire.ParseProfileURI(u)
			if !ok {
				uid = u
			}
			in.Recipients.Users = append(in.Recipients.Users, uid)
		}
		for _, u := range r.Roles {
			pid, rid, _ := wire.ParseRoleURI(u)
			if pid != "p1" { // the tests' project
				rid = ""
			}
			in.Recipients.Roles = append(in.Recipients.Roles, rid)
		}
		for _, v := range r.Via {
			in.Recipients.Via = append(in.Recipients.Via, via(v))
		}
	}
	if bu := b.Burst; bu != nil {
		in.Burst = &notify.BurstInput{Report: bu.Report, Address: bu.Address, By: bu.By, Via: via(bu.Via)}
	}
	return in
}

// testKinds are the kinds the tests' channels are of.
var testKinds = channels.MustRegistry(email.Descriptor, sms.Descriptor)

// channelBody is the input of a channel configuration in its wire shape, s:
// its kind picked by its wire key, as the API picks it (a key of no kind
// stays a kind of no descriptor).
func channelBody(t testing.TB, s string) notify.ChannelInput {
	t.Helper()
	var b wire.Channel
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatal(err)
	}
	var in notify.ChannelInput
	if b.Meta != nil {
		in.Title = b.Meta.Title
	}
	if key, config, ok := b.Kind(); ok {
		in.Kind, in.Config = channels.Kind(key), config
		if d, ok := testKinds.ByWire(key); ok {
			in.Kind = d.Kind
		}
	}
	return in
}

func TestChannelValidationNamesTheField(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct{ body, field string }{
		{`{"configuration":{"emailConfiguration":{"to":"x"}},"meta":{"title":"t"}}`, "channelConfiguration.configuration.emailConfiguration.to"},
		{`{"configuration":{"emailConfiguration":{"to":"a@b.c","cc":"d"}},"meta":{"title":"t"}}`, "channelConfiguration.configuration.emailConfiguration.cc"},
		{`{"configuration":{"smsConfiguration":{"username":"AC1","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"t"}}`,
			"channelConfiguration.configuration.smsConfiguration.password"},
		{`{"configuration":{"smsConfiguration":{"username":"AC1","password":"","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"t"}}`,
			"channelConfiguration.configuration.smsConfiguration.password"},
		{`{"configuration":{"smsConfiguration":{"username":"AC1","password":"p","from":"1","to":"+420601234567"}},"meta":{"title":"t"}}`,
			"channelConfiguration.configuration.smsConfiguration.from"},
		{`{"configuration":{"faxConfiguration":{}},"meta":{"title":"t"}}`, "channelConfiguration.configuration"},
		{`{"configuration":{},"meta":{"title":"t"}}`, "channelConfiguration.configuration"},
		{`{"configuration":{"emailConfiguration":{"to":"a@b.c"}}}`, "channelConfiguration.meta.title"},
	}
	for _, tc := range cases {
		_, err := f.svc.CreateChannel(context.Background(), "u1", channelBody(t, tc.body))
		var de *notify.Error
		if !errors.As(err, &de) || de.Code != notify.Invalid || de.Field != tc.field {
			t.Errorf("%s: err = %v, want one naming %s", tc.body, err, tc.field)
		}
	}
	chans, _ := f.st.Channels(context.Background(), "u1")
	if len(chans) != 0 {
		t.Fatalf("refused bodies stored %d channels", len(chans))
	}
}

// TestChannelSecretIsSealedAndKept stores an SMS channel: the auth token is
// sealed (never in the kept configuration), and a PUT without it keeps it.
func TestChannelSecretIsSealedAndKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const body = `{"configuration":{"smsConfiguration":{"username":"AC1",%s"from":"+15005550006","to":"+420601234567"}},"meta":{"title":"%s"}}`
	ch, err := f.svc.CreateChannel(ctx, "u1", channelBody(t, fmt.Sprintf(body, `"password":"tok3n-s3cret",`, "pager")))
	must(t, err)
	if strings.Contains(string(ch.Config), "tok3n") {
		t.Fatalf("config keeps the secret: %s", ch.Config)
	}
	open := func(c store.Channel) string {
		p, err := f.box.Open(c.Secret, []byte(c.ID))
		must(t, err)
		return string(p)
	}
	if open(ch) != "tok3n-s3cret" {
		t.Fatal("secret not sealed with the channel id")
	}
	up, err := f.svc.UpdateChannel(ctx, "u1", ch.ID, channelBody(t, fmt.Sprintf(body, "", "pager 2")))
	must(t, err)
	if open(up) != "tok3n-s3cret" || up.Title != "pager 2" {
		t.Fatalf("update lost the secret or the title: %+v", up)
	}
	// Changing kind without a secret needs none for e-mail and drops the old one.
	up, err = f.svc.UpdateChannel(ctx, "u1", ch.ID, channelBody(t, `{"configuration":{"emailConfiguration":{"to":"a@b.c"}},"meta":{"title":"m"}}`))
	if err != nil || up.Secret != nil || up.Kind != "email" {
		t.Fatalf("to e-mail: %+v, %v", up, err)
	}
	if _, err := f.svc.Channel(ctx, "u2", ch.ID); !isCode(err, notify.NotFound) {
		t.Fatalf("a stranger's read = %v, want not found", err)
	}
}

func isCode(err error, c notify.Code) bool {
	var de *notify.Error
	return errors.As(err, &de) && de.Code == c
}

// TestSettleAgreesWithTheLedger checks the state machine's roll-up rule
// against the ledger's: every mix of sent and failed deliveries of a run
// settles in the store as Settle says.
func TestSettleAgreesWithTheLedger(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	must(t, f.st.CreateSubscription(ctx, store.Subscription{ID: "s1", ProjectID: "p1", Owner: "u1", Title: "S", Enabled: true,
		Created: t0, Updated: t0}, store.Quota{}))
	n := 0
	for total := 1; total <= 3; total++ {
		for failed := 0; failed <= total; failed++ {
			n++
			run := store.Run{ID: fmt.Sprintf("r%d", n), SubscriptionID: "s1", ScheduledAt: t0.Add(time.Duration(n) * time.Hour), Started: t0}
			var ds []store.Delivery
			for i := range total {
				ds = append(ds, store.Delivery{ID: fmt.Sprintf("%s-%d", run.ID, i), ChannelID: fmt.Sprintf("c%d", i), Kind: "email"})
			}
			must(t, f.st.EnqueueRun(ctx, run, ds))
			if !notify.CanMove(store.RunRunning, store.RunQueued) {
				t.Fatal("running → queued is no move")
			}
			for i, d := range ds {
				if i < failed {
					_, err := f.st.MarkFailed(ctx, d.ID, "550", t0)
					must(t, err)
				} else {
					_, err := f.st.MarkSent(ctx, d.ID, "id", t0)
					must(t, err)
				}
			}
			got, err := f.st.RunByID(ctx, run.ID)
			must(t, err)
			want := notify.Settle(total, failed)
			if got.State != want || !notify.CanMove(store.RunQueued, want) || !notify.Final(want) {
				t.Errorf("%d of %d failed: the ledger settled %s, the state machine says %s", failed, total, got.State, want)
			}
		}
	}
}

// TestHealthRollsUpFromDeliveries fails every delivery of three runs in a
// row: the third makes the subscription unhealthy and the notice goes to the
// owner's other channel, not back into the failing one; a delivered run
// makes it healthy again.
func TestHealthRollsUpFromDeliveries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	mail, err := f.svc.CreateChannel(ctx, "u1", channelBody(t, `{"configuration":{"emailConfiguration":{"to":"a@b.c"}},"meta":{"title":"m"}}`))
	must(t, err)
	pager, err := f.svc.CreateChannel(ctx, "u1", channelBody(t,
		`{"configuration":{"smsConfiguration":{"username":"AC1","password":"p","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"p"}}`))
	must(t, err)
	must(t, f.st.CreateSubscription(ctx, store.Subscription{ID: "s1", ProjectID: "p1", Owner: "u1", Title: "Revenue", Enabled: true,
		Channels: []string{mail.ID}, Created: t0, Updated: t0}, store.Quota{}))
	fire := func(n int, fail bool) store.Run {
		run := store.Run{ID: fmt.Sprintf("r%d", n), SubscriptionID: "s1", ScheduledAt: t0.Add(time.Duration(n) * time.Hour), Started: t0}
		d := store.Delivery{ID: run.ID + "-mail", ChannelID: mail.ID, Kind: "email"}
		must(t, f.st.EnqueueRun(ctx, run, []store.Delivery{d}))
		if fail {
			_, err := f.st.MarkFailed(ctx, d.ID, "550 mailbox unavailable", t0)
			must(t, err)
		} else {
			_, err := f.st.MarkSent(ctx, d.ID, "id", t0)
			must(t, err)
		}
		_, err := f.svc.RateRuns(ctx)
		must(t, err)
		return run
	}
	var third store.Run
	for i := 1; i <= 3; i++ {
		third = fire(i, true)
		if h, _ := f.svc.Health(ctx, "s1"); h.Healthy != (i < 3) || h.FailuresInARow != i {
			t.Fatalf("after %d failed runs: %+v", i, h)
		}
	}
	dels, err := f.st.RunDeliveries(ctx, third.ID)
	must(t, err)
	var notices []store.Delivery
	for _, d := range dels {
		if strings.Contains(d.Payload.Subject, "failing") {
			notices = append(notices, d)
		}
	}
	if len(notices) != 1 || notices[0].ChannelID != pager.ID || !strings.Contains(notices[0].Payload.Text, "550 mailbox unavailable") {
		t.Fatalf("notices = %+v, want one to the pager naming the refusal", notices)
	}
	fire(4, true) // already unhealthy: no second notice
	dels, _ = f.st.RunDeliveries(ctx, "r4")
	if len(dels) != 1 {
		t.Fatalf("run 4 carries %d deliveries, want no notice", len(dels))
	}
	fire(5, false)
	if h, _ := f.svc.Health(ctx, "s1"); !h.Healthy || h.FailuresInARow != 0 {
		t.Fatalf("after a delivered run: %+v", h)
	}
}
