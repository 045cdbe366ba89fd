package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestUserFilterAssignments: a user's filters are replaced as a whole, only
// by user filters of the project; they are listed by user and filter, a
// page at a time; an assigned filter is not deleted, and a deleted user's
// assignments go with them.
func TestUserFilterAssignments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openLedgerStore(t)
	for _, id := range []string{"u2", "u3"} {
		if err := s.CreateUser(ctx, User{ID: id, Domain: "default", Login: id + "@example.com", PasswordHash: "x",
			Created: ledgerT0, Updated: ledgerT0}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for i, cat := range []string{CategoryUserFilter, CategoryUserFilter, "metric"} {
		id, err := s.CreateObject(ctx, Object{ProjectID: "p1", Category: cat, Identifier: fmt.Sprint("o", i), Title: "O",
			Content: []byte(`{"expression":"x"}`), Author: "u1", Contributor: "u1", Created: ledgerT0, Updated: ledgerT0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	f1, f2, metric := ids[0], ids[1], ids[2]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetUserFilters(ctx, "p1", "u2", []int64{f1, f2, f1}))
	must(s.SetUserFilters(ctx, "p1", "u3", []int64{f2}))
	if err := s.SetUserFilters(ctx, "p1", "u3", []int64{f1, metric}); !errors.Is(err, ErrNotUserFilter) {
		t.Errorf("assigning a metric: %v", err)
	}
	if err := s.SetUserFilters(ctx, "p1", "nobody", []int64{f1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("assigning to nobody: %v", err)
	}
	got, err := s.UserFilters(ctx, "p1", "u3")
	if err != nil || len(got) != 1 || got[0].ID != f2 || string(got[0].Content) != `{"expression":"x"}` {
		t.Fatalf("u3's filters after a refused change: %+v, %v", got, err)
	}
	list, total, err := s.Assignments(ctx, "p1", AssignmentQuery{Count: 10})
	if err != nil || total != 2 || len(list) != 2 || list[0].UserID != "u2" || !slices.Equal(list[0].Filters, []int64{f1, f2}) ||
		list[1].UserID != "u3" || !slices.Equal(list[1].Filters, []int64{f2}) {
		t.Fatalf("assignments: %+v %d %v", list, total, err)
	}
	list, total, err = s.Assignments(ctx, "p1", AssignmentQuery{Filters: []int64{f1}, Count: 10})
	if err != nil || total != 1 || list[0].UserID != "u2" || len(list[0].Filters) != 2 {
		t.Errorf("the holders of f1: %+v %d %v", list, total, err)
	}
	list, total, err = s.Assignments(ctx, "p1", AssignmentQuery{Count: 1, Offset: 1})
	if err != nil || total != 2 || len(list) != 1 || list[0].UserID != "u3" {
		t.Errorf("the second page: %+v %d %v", list, total, err)
	}
	if err := s.DeleteObject(ctx, "p1", f2); !errors.Is(err, ErrAssigned) {
		t.Errorf("deleting an assigned filter: %v", err)
	}
	must(s.SetUserFilters(ctx, "p1", "u3", nil))
	must(s.DeleteUser(ctx, "u2"))
	if list, total, err := s.Assignments(ctx, "p1", AssignmentQuery{Count: 10}); err != nil || total != 0 || len(list) != 0 {
		t.Errorf("after the users went: %+v %d %v", list, total, err)
	}
	must(s.DeleteObject(ctx, "p1", f2))
}

// TestRecipientDeliveries: deliveries of one run to many addresses through
// one channel (or none) are kept apart by their address, read with their own
// configuration, searched by member or address, and counted by state.
func TestRecipientDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	run := Run{ID: "r1", SubscriptionID: sub, ScheduledAt: ledgerT0, Started: ledgerT0}
	var ds []Delivery
	for i := range 120 {
		address := fmt.Sprintf("m%d@example.com", i)
		ds = append(ds, Delivery{ID: fmt.Sprint("d", i), Kind: "email", Address: address, Recipient: fmt.Sprint("u", i%3),
			Config: []byte(`{"to":"` + address + `"}`), Payload: Payload{Subject: "S", HTMLFile: "/runs/abc"}})
	}
	if err := s.EnqueueRun(ctx, run, ds); err != nil {
		t.Fatal(err)
	}
	out, err := s.OutgoingDeliveries(ctx, "d7")
	if err != nil {
		t.Fatal(err)
	}
	o := out["d7"]
	p, err := o.Payload.Decode()
	if err != nil || o.ChannelGone || o.ChannelKind != "email" || string(o.ChannelConfig) != `{"to":"m7@example.com"}` ||
		!o.Readdressed || p.HTMLFile != "/runs/abc" {
		t.Errorf("outgoing %+v (payload %+v, %v)", o, p, err)
	}
	page, total, err := s.RunDeliveryPage(ctx, "r1", DeliveryQuery{Address: "M1", Limit: 5})
	if err != nil || total != 31 || len(page) != 5 || page[0].Address != "m1@example.com" { // m1, m10..m19, m100..m119
		t.Errorf("searched by address: %d of %d, %v", len(page), total, err)
	}
	if _, total, _ := s.RunDeliveryPage(ctx, "r1", DeliveryQuery{Recipient: "u2", Limit: 1}); total != 40 {
		t.Errorf("searched by member: %d", total)
	}
	if _, total, _ := s.RunDeliveryPage(ctx, "r1", DeliveryQuery{Address: "%_", Limit: 1}); total != 0 {
		t.Errorf("a search for %%_ found %d: LIKE's wildcards are not escaped", total)
	}
	if _, err := s.MarkSent(ctx, "d0", "p", ledgerT0); err != nil {
		t.Fatal(err)
	}
	counts, err := s.RunDeliveryCounts(ctx, "r1")
	if err != nil || counts[DeliverySent] != 1 || counts[DeliveryPending] != 119 || counts[DeliveryFailed] != 0 {
		t.Errorf("counts %v %v", counts, err)
	}
	files, err := s.PendingFiles(ctx, ledgerT0.Add(time.Second))
	if err != nil || !files["/runs/abc"] {
		t.Errorf("the shared HTML part is not kept for the pending deliveries: %v %v", files, err)
	}
}
