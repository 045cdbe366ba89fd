package notify_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// fakeTester records the messages it is given and answers with id or err.
type fakeTester struct {
	mu   sync.Mutex
	msgs []channels.Message
	id   string
	err  error
}

func (f *fakeTester) Test(_ context.Context, m channels.Message) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, m)
	return f.id, f.err
}

// testWorld is the fixture's store with a service that has a tester and a
// clock the test moves.
type testWorld struct {
	*fixture
	svc    *notify.Service
	tester *fakeTester
	now    time.Time
}

func newTestWorld(t *testing.T, cfg notify.Config, with ...func(*notify.Options)) *testWorld {
	f := newFixture(t)
	must(t, f.st.CreateUser(context.Background(), store.User{ID: "u2", Domain: "default", Login: "u2@example.com",
		PasswordHash: "x", Created: t0, Updated: t0}))
	w := &testWorld{fixture: f, tester: &fakeTester{id: "<id-1@herald.test>"}, now: t0}
	kinds := channels.MustRegistry(email.Descriptor, sms.Descriptor)
	settings := map[channels.Kind]channels.Settings{}
	for _, d := range kinds.All() {
		settings[d.Kind] = d.Settings()
	}
	opt := notify.Options{Kinds: kinds, Settings: settings, Box: f.box,
		Clock: clock.NowFrom(func() time.Time { return w.now }), Tester: w.tester}
	for _, f := range with {
		f(&opt)
	}
	w.svc = notify.New(f.st, cfg, opt)
	return w
}

const smsChannel = `{"configuration":{"smsConfiguration":{"username":"AC1","password":"tok3n-s3cret","from":"+15005550006",` +
	`"to":"+420601234567"}},"meta":{"title":"Pager"}}`

// TestTestChannelSendsTheTestMessage: the tester gets one message with the
// test subject, a text naming who asked, when and which channel, a fresh
// delivery id, no attachments, no source, and the channel's secret opened.
func TestTestChannelSendsTheTestMessage(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.DefaultConfig())
	ctx := context.Background()
	ch, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	res, err := w.svc.TestChannel(ctx, "u1", ch.ID, "u1@example.com")
	must(t, err)
	if res != (notify.TestResult{ProviderID: "<id-1@herald.test>"}) {
		t.Fatalf("result = %+v", res)
	}
	if len(w.tester.msgs) != 1 {
		t.Fatalf("tester got %d messages", len(w.tester.msgs))
	}
	m := w.tester.msgs[0]
	want := channels.Channel{ID: ch.ID, Kind: sms.Kind, Config: ch.Config, Secret: "tok3n-s3cret"}
	if m.Channel.ID != want.ID || m.Channel.Kind != want.Kind || string(m.Channel.Config) != string(want.Config) ||
		m.Channel.Secret != want.Secret {
		t.Errorf("channel = %+v (secret opened: %v), want %+v", m.Channel, m.Channel.Secret == want.Secret, want)
	}
	if m.Subject != "Test message from Herald" || m.HTML != "" || len(m.Attachments) != 0 ||
		m.Source.Run != "" || m.Source.Subscription != "" || !m.Source.Instant.IsZero() {
		t.Errorf("message = %+v", m)
	}
	for _, part := range []string{"u1@example.com", "2026-03-01 08:00:00 UTC", "“Pager”", "Nothing needs doing."} {
		if !strings.Contains(m.Text, part) {
			t.Errorf("text %q lacks %q", m.Text, part)
		}
	}
	if strings.Contains(m.Text, "tok3n") {
		t.Errorf("text shows the secret: %q", m.Text)
	}
	// A second test, later, has a delivery id of its own.
	w.now = w.now.Add(notify.DefaultConfig().TestEvery)
	_, err = w.svc.TestChannel(ctx, "u1", ch.ID, "u1@example.com")
	must(t, err)
	ids := []string{w.tester.msgs[0].DeliveryID, w.tester.msgs[1].DeliveryID}
	if !strings.HasPrefix(ids[0], "test-") || !strings.HasPrefix(ids[1], "test-") || ids[0] == ids[1] {
		t.Errorf("delivery ids %q", ids)
	}
}

// TestTestChannelTooSoon: a second test by the same owner within
// Config.TestEvery, of the same channel or another of theirs, is TooSoon
// with RetryAfter and sends nothing; another owner may test meanwhile, and
// the first once TestEvery has passed.
func TestTestChannelTooSoon(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.DefaultConfig())
	ctx := context.Background()
	a, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	b, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, `{"configuration":{"emailConfiguration":{"to":"u1@example.com"}},"meta":{"title":"Mail"}}`))
	must(t, err)
	c, err := w.svc.CreateChannel(ctx, "u2", channelBody(t, smsChannel))
	must(t, err)
	_, err = w.svc.TestChannel(ctx, "u1", a.ID, "u1")
	must(t, err)
	w.now = w.now.Add(4 * time.Second)
	for _, id := range []string{a.ID, b.ID} {
		_, err = w.svc.TestChannel(ctx, "u1", id, "u1")
		var de *notify.Error
		if !errors.As(err, &de) || de.Code != notify.TooSoon || de.RetryAfter != 6*time.Second {
			t.Fatalf("second test, of %s: err = %#v, want TooSoon with RetryAfter 6s", id, err)
		}
		if !strings.Contains(de.Text(), "6 s") {
			t.Errorf("message %q", de.Text())
		}
	}
	if _, err := w.svc.TestChannel(ctx, "u2", c.ID, "u2"); err != nil {
		t.Fatalf("another owner: %v", err)
	}
	w.now = w.now.Add(6 * time.Second)
	if _, err := w.svc.TestChannel(ctx, "u1", b.ID, "u1"); err != nil {
		t.Fatalf("after TestEvery: %v", err)
	}
	if len(w.tester.msgs) != 3 {
		t.Fatalf("tester got %d messages, want 3", len(w.tester.msgs))
	}
}

// TestTestChannelSpendsTheOwnersBudget: an owner with 100 channels may test
// them SendNowPerHour times in an hour, whichever; the next is TooSoon
// until the hour since the first has passed. Another owner is not held.
func TestTestChannelSpendsTheOwnersBudget(t *testing.T) {
	t.Parallel()
	cfg := notify.DefaultConfig()
	cfg.TestEvery = time.Second
	w := newTestWorld(t, cfg)
	ctx := context.Background()
	var ids []string
	for range 100 {
		ch, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
		must(t, err)
		ids = append(ids, ch.ID)
	}
	start := w.now
	for i := range 60 {
		w.now = w.now.Add(time.Second)
		if _, err := w.svc.TestChannel(ctx, "u1", ids[i], "u1"); err != nil {
			t.Fatalf("test %d: %v", i+1, err)
		}
	}
	w.now = w.now.Add(time.Second)
	_, err := w.svc.TestChannel(ctx, "u1", ids[60], "u1")
	var de *notify.Error
	if !errors.As(err, &de) || de.Code != notify.TooSoon || de.RetryAfter != start.Add(time.Hour+time.Second).Sub(w.now) {
		t.Fatalf("61st test: err = %v, want TooSoon until an hour after the first", err)
	}
	if !strings.Contains(de.Text(), "at most 60 sends on demand") || !strings.Contains(de.Text(), "per user") {
		t.Errorf("message %q", de.Text())
	}
	other, err := w.svc.CreateChannel(ctx, "u2", channelBody(t, smsChannel))
	must(t, err)
	if _, err := w.svc.TestChannel(ctx, "u2", other.ID, "u2"); err != nil {
		t.Fatalf("another owner: %v", err)
	}
	w.now = start.Add(time.Hour + time.Second)
	if _, err := w.svc.TestChannel(ctx, "u1", ids[60], "u1"); err != nil {
		t.Fatalf("an hour after the first: %v", err)
	}
	if _, err := w.svc.TestChannel(ctx, "u1", ids[61], "u1"); err == nil {
		t.Fatal("a second test at once passed TestEvery")
	}
	if n := len(w.tester.msgs); n != 62 {
		t.Fatalf("tester got %d messages, want 62", n)
	}
}

// TestTestChannelSaysOnlyThatTheReceiverWasNotReached: whatever kept the
// test from its receiver, the result says channels.UnreachableText and no
// more; a provider's answer is the result as it is.
func TestTestChannelSaysOnlyThatTheReceiverWasNotReached(t *testing.T) {
	t.Parallel()
	cfg := notify.DefaultConfig()
	cfg.TestEvery = 0
	w := newTestWorld(t, cfg)
	ctx := context.Background()
	ch, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	for _, sendErr := range []error{
		channels.Unreachable(errors.New("dial tcp 127.0.0.1:9: connect: connection refused")),
		channels.Unreachable(errors.New("webhook: post to 127.0.0.1:22: malformed HTTP response \"SSH-2.0\"")),
		channels.Permanent(channels.Unreachable(errors.New("webhook: hooks.test resolves to 10.0.0.1, a private address"))),
		&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")},
	} {
		w.tester.err = sendErr
		res, err := w.svc.TestChannel(ctx, "u1", ch.ID, "u1")
		must(t, err)
		if res.Error != "could not reach the receiver" || res.Permanent != channels.IsPermanent(sendErr) {
			t.Errorf("%v: result %+v", sendErr, res)
		}
	}
}

// TestTestChannelNotFound: another user's channel and an unknown id are
// NotFound, and nothing is sent.
func TestTestChannelNotFound(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.DefaultConfig())
	ctx := context.Background()
	ch, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	for _, c := range []struct{ owner, id string }{{"u2", ch.ID}, {"u1", "000000000000000000000000"}} {
		_, err := w.svc.TestChannel(ctx, c.owner, c.id, "x")
		var de *notify.Error
		if !errors.As(err, &de) || de.Code != notify.NotFound {
			t.Errorf("%s of %s: err = %v, want NotFound", c.id, c.owner, err)
		}
	}
	if len(w.tester.msgs) != 0 {
		t.Fatalf("tester got %d messages", len(w.tester.msgs))
	}
}

// TestTestChannelRefusal: the provider's refusal is the result, not an
// error, with Permanent as channels.IsPermanent says; never the secret.
func TestTestChannelRefusal(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.Config{MinInterval: time.Minute, DefaultTimezone: "UTC", FailuresBeforeNotice: 1,
		HealthInterval: time.Second, FileLinkTTL: time.Hour}) // TestEvery 0: no bound
	ctx := context.Background()
	ch, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	for _, c := range []struct {
		err       error
		permanent bool
	}{
		{channels.Permanent(errors.New("twilio: 21211 invalid 'To' number")), true},
		{errors.New("twilio: 503 service unavailable"), false},
	} {
		w.tester.err = c.err
		res, err := w.svc.TestChannel(ctx, "u1", ch.ID, "u1")
		if err != nil {
			t.Fatalf("a refusal is an error of TestChannel: %v", err)
		}
		if res.Error != c.err.Error() || res.Permanent != c.permanent || res.ProviderID != "" {
			t.Errorf("result = %+v, want the error %q permanent %v", res, c.err, c.permanent)
		}
	}
}

// TestTestChannelWithoutTester: a service with no tester refuses with
// ErrNoTester, after checking the channel exists.
func TestTestChannelWithoutTester(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	ch, err := f.svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	if _, err := f.svc.TestChannel(ctx, "u1", ch.ID, "u1"); !errors.Is(err, notify.ErrNoTester) {
		t.Fatalf("err = %v, want ErrNoTester", err)
	}
	var de *notify.Error
	if _, err := f.svc.TestChannel(ctx, "u2", ch.ID, "u1"); !errors.As(err, &de) || de.Code != notify.NotFound {
		t.Fatalf("a stranger's channel: err = %v, want NotFound", err)
	}
}

// TestTestEveryValidates: a negative testEvery is named.
func TestTestEveryValidates(t *testing.T) {
	t.Parallel()
	c := notify.DefaultConfig()
	if c.TestEvery != 10*time.Second {
		t.Errorf("default testEvery = %s", c.TestEvery)
	}
	c.TestEvery = -time.Second
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "testEvery") {
		t.Errorf("err = %v, want one naming testEvery", err)
	}
}
