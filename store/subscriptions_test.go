package store

import (
	"context"
	"fmt"
	"testing"
)

// TestSubscriptionsByID reads many subscriptions in one call, across the
// chunks of one query each, with their channels, and leaves unknown ids out.
func TestSubscriptionsByID(t *testing.T) {
	ctx := context.Background()
	s, _ := openLedgerStore(t)
	if err := s.CreateChannel(ctx, Channel{ID: "c1", Owner: "u1", Kind: "email", Title: "Mail", Config: []byte(`{}`)}, Quota{}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 1200 {
		id := fmt.Sprintf("s%04d", i)
		ids = append(ids, id)
		sub := Subscription{ID: id, ProjectID: "p1", Owner: "u1", Title: "S", Enabled: true, Channels: []string{"c1"},
			Created: ledgerT0, Updated: ledgerT0}
		if err := s.CreateSubscription(ctx, sub, Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SubscriptionsByID(ctx, append(ids, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("read %d subscriptions, want %d", len(got), len(ids))
	}
	for _, id := range ids {
		if sub := got[id]; sub.ID != id || len(sub.Channels) != 1 || sub.Channels[0] != "c1" {
			t.Fatalf("subscription %s = %+v", id, sub)
		}
	}
	if _, ok := got["gone"]; ok {
		t.Fatal("an unknown id was read")
	}
}
