package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestSubscriptionsByID reads many subscriptions in one call, across the
// chunks of one query each, with their channels, and leaves unknown ids out.
func TestSubscriptionsByID(t *testing.T) {
	t.Parallel()
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

// TestChannelGenerationsMoveOnWhenResumed: a subscription's channels start in
// generation 0; turning a paused channel back on, or adding a channel back,
// moves it to the next of the subscription's own sequence, and a pause asked
// for in an earlier generation is refused with ErrConflict.
func TestChannelGenerationsMoveOnWhenResumed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openLedgerStore(t)
	for _, c := range []string{"c1", "c2"} {
		if err := s.CreateChannel(ctx, Channel{ID: c, Owner: "u1", Kind: "email", Title: c, Config: []byte(`{}`)}, Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	sub := Subscription{ID: "s2", ProjectID: "p1", Owner: "u1", Title: "S", Enabled: true, Channels: []string{"c1", "c2"},
		Created: ledgerT0, Updated: ledgerT0}
	if err := s.CreateSubscription(ctx, sub, Quota{}); err != nil {
		t.Fatal(err)
	}
	gens := func() map[string]int64 {
		t.Helper()
		got, err := s.SubscriptionByID(ctx, "s2")
		if err != nil {
			t.Fatal(err)
		}
		return got.Generations
	}
	if g := gens(); len(g) != 0 {
		t.Fatalf("a new subscription's generations: %v", g)
	}
	if ok, err := s.PauseChannel(ctx, "s2", "c1", 0, "", "a@example.com", ledgerT0); !ok || err != nil {
		t.Fatalf("pause in generation 0: %v, %v", ok, err)
	}
	sub.Paused = nil // the owner turns c1 back on
	if err := s.UpdateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if g := gens(); g["c1"] != 1 || g["c2"] != 0 {
		t.Fatalf("after c1 was resumed: %v, want c1 in 1 and c2 in 0", g)
	}
	if _, err := s.PauseChannel(ctx, "s2", "c1", 0, "", "a@example.com", ledgerT0); !errors.Is(err, ErrConflict) {
		t.Fatalf("a pause of generation 0 after the resume: %v, want ErrConflict", err)
	}
	if err := s.UpdateSubscription(ctx, sub); err != nil { // nothing resumed: nothing moves
		t.Fatal(err)
	}
	sub.Channels = []string{"c1"}
	if err := s.UpdateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	sub.Channels = []string{"c1", "c2"}
	if err := s.UpdateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if g := gens(); g["c1"] != 1 || g["c2"] != 2 {
		t.Fatalf("after c2 was taken off and put back: %v, want c1 in 1 and c2 in 2", g)
	}
	if ok, err := s.PauseChannel(ctx, "s2", "c2", 2, "", "b@example.com", ledgerT0); !ok || err != nil {
		t.Fatalf("pause in the current generation: %v, %v", ok, err)
	}
}
