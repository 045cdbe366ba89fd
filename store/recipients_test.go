package store

import (
	"context"
	"testing"
	"time"
)

// TestRecipientsHoldTheirChannels: a channel saved with a recipient is read
// as unverified by the relay until that owner's recipient of that kind and
// address is verified; of two asks of a recipient never asked, one wins, and
// an ask undone can be made again.
func TestRecipientsHoldTheirChannels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	for id, rcpt := range map[string]string{"c1": "x@example.net", "c2": ""} {
		if err := s.CreateChannel(ctx, Channel{ID: id, Owner: "u1", Kind: "email", Title: "Mail", Config: []byte(`{}`),
			Recipient: rcpt}, Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	run := enqueue(t, s, sub, ledgerT0, "c1", "c2")
	unverified := func() map[string]bool {
		t.Helper()
		out, err := s.OutgoingDeliveries(ctx, run.ID+"-c1", run.ID+"-c2")
		if err != nil {
			t.Fatal(err)
		}
		return map[string]bool{"c1": out[run.ID+"-c1"].ChannelUnverified, "c2": out[run.ID+"-c2"].ChannelUnverified}
	}
	if got := unverified(); !got["c1"] || got["c2"] {
		t.Fatalf("unverified = %v, want c1 only", got)
	}
	r, err := s.EnsureRecipient(ctx, "u1", "email", "x@example.net", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.EnsureRecipient(ctx, "u1", "email", "x@example.net", "r2"); err != nil || again.ID != r.ID {
		t.Fatalf("EnsureRecipient again = %+v, %v; want %s", again, err, r.ID)
	}
	at := ledgerT0.Add(time.Minute)
	if first, err := s.AskRecipient(ctx, r.ID, at, true); err != nil || !first {
		t.Fatalf("first ask = %v, %v", first, err)
	}
	if first, err := s.AskRecipient(ctx, r.ID, at, true); err != nil || first {
		t.Fatalf("second first ask = %v, %v", first, err)
	}
	if err := s.UnaskRecipient(ctx, r.ID, at, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if first, err := s.AskRecipient(ctx, r.ID, at, true); err != nil || !first {
		t.Fatalf("ask after an undone one = %v, %v", first, err)
	}
	if got := unverified(); !got["c1"] {
		t.Fatal("asked, not verified, and the channel sends")
	}
	if changed, err := s.VerifyRecipient(ctx, r.ID, at); err != nil || !changed {
		t.Fatalf("VerifyRecipient = %v, %v", changed, err)
	}
	if changed, err := s.VerifyRecipient(ctx, r.ID, at); err != nil || changed {
		t.Fatalf("VerifyRecipient again = %v, %v", changed, err)
	}
	if got := unverified(); got["c1"] || got["c2"] {
		t.Fatalf("unverified = %v after the recipient confirmed", got)
	}
	if first, err := s.AskRecipient(ctx, r.ID, at, false); err != nil || first {
		t.Fatalf("a verified recipient was asked again: %v, %v", first, err)
	}
}
