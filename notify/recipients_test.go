package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/notify"
)

// verifyService is a service over the fixture's store with recipient
// verification as given, a tester and the test world's clock.
func verifyService(w *testWorld, cfg notify.Config, verify bool, trusted ...string) *notify.Service {
	kinds := channels.MustRegistry(email.Descriptor, sms.Descriptor)
	settings := map[channels.Kind]channels.Settings{}
	for _, d := range kinds.All() {
		settings[d.Kind] = d.Settings()
	}
	return notify.New(w.st, cfg, notify.Options{Kinds: kinds, Settings: settings, Box: w.box,
		Clock: clock.NowFrom(func() time.Time { return w.now }), Tester: w.tester, PublicURL: "https://herald.test", LinkKey: []byte("k"),
		VerifyRecipients: verify, TrustedDomains: trusted})
}

func mailTo(address string) string {
	return `{"configuration":{"emailConfiguration":{"to":"` + address + `"}},"meta":{"title":"Mail"}}`
}

// TestTrustedDomainsNeedNoConfirmation: an address of a trusted domain, or
// of a subdomain of one, needs no confirmation; others, and every phone
// number, do, and their first save sends one.
func TestTrustedDomainsNeedNoConfirmation(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.DefaultConfig())
	svc := verifyService(w, notify.DefaultConfig(), true, "Example.com", " example.org. ")
	ctx := context.Background()
	for body, want := range map[string]string{
		mailTo("a@example.com"):          "",
		mailTo("B@Mail.Example.COM"):     "",
		mailTo("c@example.org"):          "",
		mailTo("d@notexample.com"):       "d@notexample.com",
		mailTo("E@Example.net"):          "e@example.net",
		mailTo("f@example.com.evil.net"): "f@example.com.evil.net",
		smsChannel:                       "+420601234567",
	} {
		ch, err := svc.CreateChannel(ctx, "u1", channelBody(t, body))
		must(t, err)
		if ch.Recipient != want {
			t.Errorf("%s: recipient %q, want %q", body, ch.Recipient, want)
		}
		v, err := svc.Verification(ctx, ch)
		must(t, err)
		if want == "" && v != notify.Verified || want != "" && v != notify.Unverified {
			t.Errorf("%s: verification %q", body, v)
		}
	}
	var sent []string
	for _, m := range w.tester.msgs {
		if m.Subject != notify.ConfirmSubject || !strings.Contains(m.Text, "https://herald.test/confirm/") {
			t.Errorf("message %q: %q", m.Subject, m.Text)
		}
		sent = append(sent, m.Channel.ID)
	}
	if len(sent) != 4 {
		t.Errorf("%d confirmations, want 4", len(sent))
	}
}

// TestConfirmationsSpendTheOwnersBudget: a confirmation spends one of the
// owner's sends on demand; with none left the channel is saved, unverified,
// and no confirmation goes, until the owner sends it again. A channel whose
// recipient has not confirmed may not be tested either.
func TestConfirmationsSpendTheOwnersBudget(t *testing.T) {
	t.Parallel()
	cfg := notify.DefaultConfig()
	cfg.SendNowPerHour = 1
	w := newTestWorld(t, cfg)
	svc := verifyService(w, cfg, true, "example.com")
	ctx := context.Background()
	own, err := svc.CreateChannel(ctx, "u1", channelBody(t, mailTo("me@example.com")))
	must(t, err)
	_, err = svc.CreateChannel(ctx, "u1", channelBody(t, mailTo("one@example.net")))
	must(t, err)
	two, err := svc.CreateChannel(ctx, "u1", channelBody(t, mailTo("two@example.net")))
	must(t, err)
	if n := len(w.tester.msgs); n != 1 {
		t.Fatalf("%d confirmations, want the one the budget allows", n)
	}
	_, err = svc.ResendConfirmation(ctx, "u1", two.ID)
	var de *notify.Error
	if !errors.As(err, &de) || de.Code != notify.TooSoon || !strings.Contains(de.Text(), "Send budget spent") {
		t.Fatalf("resend with the budget spent: %v", err)
	}
	w.now = w.now.Add(time.Hour)
	res, err := svc.ResendConfirmation(ctx, "u1", two.ID)
	must(t, err)
	if res.ProviderID == "" || len(w.tester.msgs) != 2 {
		t.Fatalf("resend an hour later: %+v, %d messages", res, len(w.tester.msgs))
	}
	if _, err := svc.TestChannel(ctx, "u1", own.ID, "u1"); !errors.As(err, &de) || de.Code != notify.TooSoon {
		t.Fatalf("a test with the budget spent: %v", err)
	}
	if _, err := svc.TestChannel(ctx, "u1", two.ID, "u1"); !errors.As(err, &de) || de.Code != notify.Conflict {
		t.Fatalf("a test of a channel whose recipient has not confirmed: %v", err)
	}
	if n := len(w.tester.msgs); n != 2 {
		t.Fatalf("%d messages, want the two confirmations", n)
	}
}

// TestRecheckRecipientsFollowsTheConfiguration: channels saved while
// verification was off wait for their recipients once it is on, from the
// recheck at start; a domain trusted later releases its addresses.
func TestRecheckRecipientsFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.DefaultConfig())
	ctx := context.Background()
	ch, err := verifyService(w, notify.DefaultConfig(), false).CreateChannel(ctx, "u1", channelBody(t, mailTo("x@example.net")))
	must(t, err)
	if ch.Recipient != "" {
		t.Fatalf("recipient %q without verification", ch.Recipient)
	}
	on := verifyService(w, notify.DefaultConfig(), true)
	if n, err := on.RecheckRecipients(ctx); err != nil || n != 1 {
		t.Fatalf("recheck with verification on: %d, %v", n, err)
	}
	ch, err = on.Channel(ctx, "u1", ch.ID)
	must(t, err)
	if v, _ := on.Verification(ctx, ch); ch.Recipient != "x@example.net" || v != notify.Unverified {
		t.Fatalf("after the recheck: recipient %q, %s", ch.Recipient, v)
	}
	if n, err := on.RecheckRecipients(ctx); err != nil || n != 0 {
		t.Fatalf("a second recheck: %d, %v", n, err)
	}
	trusting := verifyService(w, notify.DefaultConfig(), true, "example.net")
	if n, err := trusting.RecheckRecipients(ctx); err != nil || n != 1 {
		t.Fatalf("recheck with example.net trusted: %d, %v", n, err)
	}
	ch, err = trusting.Channel(ctx, "u1", ch.ID)
	must(t, err)
	if ch.Recipient != "" {
		t.Fatalf("a trusted address still waits: %q", ch.Recipient)
	}
	if len(w.tester.msgs) != 0 {
		t.Errorf("a recheck sent %d confirmations", len(w.tester.msgs))
	}
}

// TestConfirmationLinkExpires: a confirmation link followed after seven
// days is Gone and confirms nothing.
func TestConfirmationLinkExpires(t *testing.T) {
	t.Parallel()
	w := newTestWorld(t, notify.DefaultConfig())
	svc := verifyService(w, notify.DefaultConfig(), true)
	ctx := context.Background()
	ch, err := svc.CreateChannel(ctx, "u1", channelBody(t, mailTo("x@example.net")))
	must(t, err)
	text := w.tester.msgs[0].Text
	i := strings.Index(text, "/confirm/")
	token := strings.Fields(text[i+len("/confirm/"):])[0]
	w.now = w.now.Add(7 * 24 * time.Hour)
	var de *notify.Error
	if _, err := svc.Confirm(ctx, token); !errors.As(err, &de) || de.Code != notify.Gone {
		t.Fatalf("Confirm after 7 days: %v, want Gone", err)
	}
	if v, _ := svc.Verification(ctx, ch); v != notify.Unverified {
		t.Fatalf("an expired link confirmed: %s", v)
	}
	w.now = w.now.Add(-time.Second)
	if _, err := svc.Confirm(ctx, token); err != nil {
		t.Fatalf("Confirm within 7 days: %v", err)
	}
	if v, _ := svc.Verification(ctx, ch); v != notify.Verified {
		t.Fatalf("after the link: %s", v)
	}
}
