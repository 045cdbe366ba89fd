package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var ledgerT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// openLedgerStore opens a store in a temporary folder with one user, project
// and subscription, whose id it returns.
func openLedgerStore(t testing.TB) (*Store, string) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.EnsureDomain(ctx, "default", ledgerT0); err != nil {
		t.Fatal(err)
	}
	u := User{ID: "u1", Domain: "default", Login: "u1@example.com", PasswordHash: "x", Created: ledgerT0, Updated: ledgerT0}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p := Project{ID: "p1", Title: "P", State: ProjectEnabled, Author: "u1", Contributor: "u1", Created: ledgerT0, Updated: ledgerT0}
	if err := s.CreateProject(ctx, p, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSubscription(ctx, Subscription{ID: "s1", ProjectID: "p1", Owner: "u1", Title: "S", Enabled: true,
		Created: ledgerT0, Updated: ledgerT0}, Quota{}); err != nil {
		t.Fatal(err)
	}
	return s, "s1"
}

// enqueue hands over a run of sub at t with one delivery per channel id; the
// delivery ids are "<run id>-<channel id>".
func enqueue(t testing.TB, s *Store, sub string, at time.Time, channelIDs ...string) Run {
	t.Helper()
	run := Run{ID: fmt.Sprintf("r%d", at.Unix()), SubscriptionID: sub, ScheduledAt: at, Started: at}
	var ds []Delivery
	for _, ch := range channelIDs {
		ds = append(ds, Delivery{ID: run.ID + "-" + ch, ChannelID: ch, Kind: "email", Payload: Payload{
			Subject: "Revenue", Text: "up 3%",
			Attachments: []Attachment{{Name: "r.csv", ContentType: "text/csv", Path: "/exports/r.csv"}},
		}})
	}
	if err := s.EnqueueRun(context.Background(), run, ds); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return run
}

func outboxIDs(t *testing.T, s *Store) []string {
	t.Helper()
	items, err := s.Outbox(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.DeliveryID)
	}
	return ids
}

func TestEnqueueRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	run := enqueue(t, s, sub, ledgerT0, "c1", "c2")

	got, err := s.RunByID(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != RunQueued || string(got.Detail) != "{}" || !got.ScheduledAt.Equal(ledgerT0) || !got.Finished.IsZero() {
		t.Errorf("run = %+v, want queued at %v with {} detail, unfinished", got, ledgerT0)
	}
	ds, err := s.RunDeliveries(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].ChannelID != "c1" || ds[1].ChannelID != "c2" {
		t.Fatalf("deliveries = %+v, want c1 then c2", ds)
	}
	d := ds[0]
	if d.State != DeliveryPending || d.RunID != run.ID || d.SubscriptionID != sub || !d.ScheduledAt.Equal(ledgerT0) ||
		d.Kind != "email" || d.Attempts != 0 || !d.SentAt.IsZero() {
		t.Errorf("delivery = %+v", d)
	}
	wantPayload := Payload{Subject: "Revenue", Text: "up 3%",
		Attachments: []Attachment{{Name: "r.csv", ContentType: "text/csv", Path: "/exports/r.csv"}}}
	if !reflect.DeepEqual(d.Payload, wantPayload) {
		t.Errorf("payload = %+v, want %+v", d.Payload, wantPayload)
	}
	if ids := outboxIDs(t, s); !reflect.DeepEqual(ids, []string{d.ID, ds[1].ID}) {
		t.Errorf("outbox = %v", ids)
	}

	t.Run("second run of the same instant", func(t *testing.T) {
		again := Run{ID: "other", SubscriptionID: sub, ScheduledAt: ledgerT0, Started: ledgerT0}
		err := s.EnqueueRun(ctx, again, []Delivery{{ID: "other-c3", ChannelID: "c3", Kind: "email"}})
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("err = %v, want ErrConflict", err)
		}
		if _, err := s.RunByID(ctx, "other"); !errors.Is(err, ErrNotFound) {
			t.Errorf("conflicting run stored: %v", err)
		}
		if _, err := s.Delivery(ctx, "other-c3"); !errors.Is(err, ErrNotFound) {
			t.Errorf("conflicting delivery stored: %v", err)
		}
		if ids := outboxIDs(t, s); len(ids) != 2 {
			t.Errorf("outbox = %v, want the first run's two rows", ids)
		}
	})
	t.Run("an HTML payload", func(t *testing.T) {
		html := strings.Repeat(`<tr><td class="n">R&amp;D</td><td>1,234.56  "q"</td></tr>`+"\n", 100)
		want := Payload{Subject: "<Revenue> & \"costs\"", Text: "a\tb\\c\u0000", HTML: html}
		r := Run{ID: "html", SubscriptionID: sub, ScheduledAt: ledgerT0.Add(2 * time.Hour), Started: ledgerT0}
		if err := s.EnqueueRun(ctx, r, []Delivery{{ID: "html-c1", ChannelID: "c1", Kind: "email", Payload: want}}); err != nil {
			t.Fatal(err)
		}
		d, err := s.Delivery(ctx, "html-c1")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Payload, want) {
			t.Errorf("payload = %+v, want %+v", d.Payload, want)
		}
		var stored int
		if err := s.r.QueryRowContext(ctx, `SELECT length(payload) FROM delivery_payloads WHERE delivery_id = ?`,
			d.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if limit := len(html) * 6 / 5; stored > limit {
			t.Errorf("payload stored in %d characters, want at most %d for %d of HTML", stored, limit, len(html))
		}
	})
	t.Run("a channel twice in one run", func(t *testing.T) {
		r := Run{ID: "dup", SubscriptionID: sub, ScheduledAt: ledgerT0.Add(time.Hour), Started: ledgerT0}
		err := s.EnqueueRun(ctx, r, []Delivery{{ID: "a", ChannelID: "c1", Kind: "email"}, {ID: "b", ChannelID: "c1", Kind: "email"}})
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("err = %v, want ErrConflict", err)
		}
		// As the engine's handover: the claim stays, running, to be taken
		// over; nothing of the failed finish is written.
		if run, err := s.RunByID(ctx, "dup"); err != nil || run.State != RunRunning {
			t.Errorf("run of a failed handover: %+v, %v; want it claimed, running", run, err)
		}
		if ds, err := s.RunDeliveries(ctx, "dup"); err != nil || len(ds) != 0 {
			t.Errorf("deliveries of a failed handover: %v, %v", ds, err)
		}
	})
}

func TestDeleteOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	var channels []string
	for i := range 1200 { // more than one DELETE's worth of parameters
		channels = append(channels, fmt.Sprintf("c%04d", i))
	}
	run := enqueue(t, s, sub, ledgerT0, channels...)
	items, err := s.Outbox(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 10 || items[0].DeliveryID != run.ID+"-c0000" || items[0].Kind != "email" || !items[0].Created.Equal(ledgerT0) {
		t.Fatalf("first page = %+v", items[:min(1, len(items))])
	}
	var all []string
	for _, c := range channels[:1100] {
		all = append(all, run.ID+"-"+c)
	}
	if err := s.DeleteOutbox(ctx, append(all, "no-such-delivery")...); err != nil {
		t.Fatal(err)
	}
	items, err = s.Outbox(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 100 || items[0].DeliveryID != run.ID+"-c1100" {
		t.Errorf("left %d rows starting %v, want 100 from c1100", len(items), items[:min(1, len(items))])
	}
	if err := s.DeleteOutbox(ctx); err != nil {
		t.Errorf("delete nothing: %v", err)
	}
}

func TestMarkSentOnlyFromPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	run := enqueue(t, s, sub, ledgerT0, "c1")
	id := run.ID + "-c1"
	later := ledgerT0.Add(time.Minute)

	if n, err := s.RecordAttempt(ctx, id, "451 try later", later); err != nil || n != 1 {
		t.Fatalf("record attempt = %d, %v; want 1", n, err)
	}
	ok, err := s.MarkSent(ctx, id, "<msg@example.com>", later)
	if err != nil || !ok {
		t.Fatalf("mark sent = %v, %v; want true", ok, err)
	}
	d, err := s.Delivery(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.State != DeliverySent || d.Attempts != 2 || d.ProviderID != "<msg@example.com>" || !d.SentAt.Equal(later) || d.LastError != "451 try later" {
		t.Errorf("delivery = %+v", d)
	}

	for name, write := range map[string]func() error{
		"mark sent again": func() error {
			ok, err := s.MarkSent(ctx, id, "<other@example.com>", later)
			if ok {
				return errors.New("reported a change")
			}
			return err
		},
		"mark failed": func() error {
			ok, err := s.MarkFailed(ctx, id, "boom", later)
			if ok {
				return errors.New("reported a change")
			}
			return err
		},
		"record attempt": func() error {
			_, err := s.RecordAttempt(ctx, id, "boom", later)
			if !errors.Is(err, ErrFinal) {
				return fmt.Errorf("err = %v, want ErrFinal", err)
			}
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			if err := write(); err != nil {
				t.Fatal(err)
			}
			after, err := s.Delivery(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(after, d) {
				t.Errorf("delivery changed: %+v, was %+v", after, d)
			}
		})
	}
}

func TestLedgerUnknownDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openLedgerStore(t)
	if _, err := s.Delivery(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delivery: %v", err)
	}
	if _, err := s.MarkSent(ctx, "nope", "x", ledgerT0); !errors.Is(err, ErrNotFound) {
		t.Errorf("MarkSent: %v", err)
	}
	if _, err := s.MarkFailed(ctx, "nope", "x", ledgerT0); !errors.Is(err, ErrNotFound) {
		t.Errorf("MarkFailed: %v", err)
	}
	if _, err := s.RecordAttempt(ctx, "nope", "x", ledgerT0); !errors.Is(err, ErrNotFound) {
		t.Errorf("RecordAttempt: %v", err)
	}
	if _, err := s.RunByID(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RunByID: %v", err)
	}
}

func TestRunRollUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		outcomes  []string // per delivery: "sent", "failed" or "" (left pending)
		wantState string
		wantError string
		finished  bool
	}{
		{name: "all sent", outcomes: []string{"sent", "sent", "sent"}, wantState: RunDelivered, finished: true},
		{name: "some failed", outcomes: []string{"sent", "failed", "sent"}, wantState: RunPartiallyFailed,
			wantError: "1 of 3 deliveries failed", finished: true},
		{name: "all failed", outcomes: []string{"failed", "failed"}, wantState: RunFailed,
			wantError: "all 2 deliveries failed", finished: true},
		{name: "one pending", outcomes: []string{"sent", "failed", ""}, wantState: RunQueued},
		{name: "single sent", outcomes: []string{"sent"}, wantState: RunDelivered, finished: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, sub := openLedgerStore(t)
			var chs []string
			for i := range tt.outcomes {
				chs = append(chs, fmt.Sprintf("c%d", i))
			}
			run := enqueue(t, s, sub, ledgerT0, chs...)
			done := ledgerT0.Add(time.Minute)
			for i, o := range tt.outcomes {
				id := run.ID + "-" + chs[i]
				var err error
				switch o {
				case "sent":
					_, err = s.MarkSent(ctx, id, "p", done)
				case "failed":
					_, err = s.MarkFailed(ctx, id, "550 no such mailbox", done)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.RunByID(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tt.wantState || got.Error != tt.wantError {
				t.Errorf("run state %q error %q, want %q %q", got.State, got.Error, tt.wantState, tt.wantError)
			}
			if tt.finished != !got.Finished.IsZero() || (tt.finished && !got.Finished.Equal(done)) {
				t.Errorf("finished = %v, want finished=%v at %v", got.Finished, tt.finished, done)
			}
		})
	}
}

func TestOutgoingDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	ch := Channel{ID: "c1", Owner: "u1", Kind: "sms", Title: "pager", Config: json.RawMessage(`{"username":"AC1","from":"+15005550006","to":"+15005550010"}`),
		Secret: []byte("sealed"), Created: ledgerT0, Updated: ledgerT0}
	if err := s.CreateChannel(ctx, ch, Quota{}); err != nil {
		t.Fatal(err)
	}
	run := enqueue(t, s, sub, ledgerT0, "c1", "gone")
	if _, err := s.RecordAttempt(ctx, run.ID+"-c1", "429 too many requests", ledgerT0); err != nil {
		t.Fatal(err)
	}
	got, err := s.OutgoingDeliveries(ctx, run.ID+"-c1", run.ID+"-gone", "no-such-delivery")
	if err != nil {
		t.Fatal(err)
	}
	payload := Payload{Subject: "Revenue", Text: "up 3%", Attachments: []Attachment{{Name: "r.csv", ContentType: "text/csv", Path: "/exports/r.csv"}}}
	tests := []struct {
		name string
		id   string
		want Outgoing
	}{
		{name: "channel present", id: run.ID + "-c1", want: Outgoing{ID: run.ID + "-c1", SubscriptionID: sub, Owner: "u1", ChannelID: "c1", Kind: "email",
			State: DeliveryPending, Attempts: 1, LastError: "429 too many requests",
			ChannelKind: "sms", ChannelConfig: ch.Config, ChannelSecret: []byte("sealed")}},
		{name: "channel deleted", id: run.ID + "-gone", want: Outgoing{ID: run.ID + "-gone", SubscriptionID: sub, Owner: "u1", ChannelID: "gone", Kind: "email",
			State: DeliveryPending, ChannelGone: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := got[tt.id]
			if p, err := o.Payload.Decode(); err != nil || !reflect.DeepEqual(p, payload) {
				t.Errorf("payload %+v, %v; want %+v", p, err, payload)
			}
			o.Payload = nil
			if !reflect.DeepEqual(o, tt.want) {
				t.Errorf("got  %+v\nwant %+v", o, tt.want)
			}
		})
	}
	if _, ok := got["no-such-delivery"]; ok || len(got) != 2 {
		t.Errorf("got %d entries, want the 2 that exist", len(got))
	}
}

func TestMarkSentBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	r1 := enqueue(t, s, sub, ledgerT0, "c1", "c2")
	r2 := enqueue(t, s, sub, ledgerT0.Add(time.Hour), "c1", "c2")
	if _, err := s.MarkFailed(ctx, r2.ID+"-c2", "550", ledgerT0); err != nil {
		t.Fatal(err)
	}
	done := ledgerT0.Add(2 * time.Hour)
	marks := []SentMark{
		{ID: r1.ID + "-c1", ProviderID: "p1"},
		{ID: r2.ID + "-c2", ProviderID: "p2"}, // already failed
		{ID: "no-such-delivery", ProviderID: "p3"},
		{ID: r1.ID + "-c2", ProviderID: "p4"},
		{ID: r2.ID + "-c1", ProviderID: "p5"},
	}
	changed, err := s.MarkSentBatch(ctx, marks, done)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, true, true}; !reflect.DeepEqual(changed, want) {
		t.Errorf("changed = %v, want %v", changed, want)
	}
	for _, m := range []SentMark{marks[0], marks[3], marks[4]} {
		d, err := s.Delivery(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.State != DeliverySent || d.ProviderID != m.ProviderID || !d.SentAt.Equal(done) || d.Attempts != 1 {
			t.Errorf("%s: %+v", m.ID, d)
		}
	}
	if d, _ := s.Delivery(ctx, r2.ID+"-c2"); d.State != DeliveryFailed || d.ProviderID != "" {
		t.Errorf("failed delivery changed: %+v", d)
	}
	for id, want := range map[string]string{r1.ID: RunDelivered, r2.ID: RunPartiallyFailed} {
		if r, err := s.RunByID(ctx, id); err != nil || r.State != want || !r.Finished.Equal(done) {
			t.Errorf("run %s: %+v %v, want %s finished at %v", id, r, err, want, done)
		}
	}
}

// TestRecordOutcomes records what senders in other processes reported, twice and out
// of order: attempts only grow, a final state stays, and the run rolls up once.
func TestRecordOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	run := enqueue(t, s, sub, ledgerT0, "a", "b")
	a, b := run.ID+"-a", run.ID+"-b"
	at := ledgerT0.Add(time.Minute)
	attempt := Outcome{ID: a, State: DeliveryPending, Attempts: 2, LastError: "451 later", At: at}
	sent := Outcome{ID: a, State: DeliverySent, Attempts: 3, ProviderID: "<m1@example.com>", At: at}
	failed := Outcome{ID: b, State: DeliveryFailed, Attempts: 1, LastError: "550 no such user", At: at}
	stale := Outcome{ID: a, State: DeliveryPending, Attempts: 1, LastError: "421 stale", At: at}
	unknown := Outcome{ID: "nobody", State: DeliverySent, Attempts: 1, At: at}

	if n, err := s.RecordOutcomes(ctx, []Outcome{attempt, stale, unknown}); err != nil || n != 0 {
		t.Fatalf("attempts: %d final, %v", n, err)
	}
	if d, _ := s.Delivery(ctx, a); d.State != DeliveryPending || d.Attempts != 2 || d.LastError != "451 later" {
		t.Fatalf("after attempts: %+v, want pending with 2 attempts; the stale one changes nothing", d)
	}
	if n, err := s.RecordOutcomes(ctx, []Outcome{sent, failed, sent, attempt}); err != nil || n != 2 {
		t.Fatalf("finals: %d final, %v; want 2", n, err)
	}
	if n, err := s.RecordOutcomes(ctx, []Outcome{sent, failed, stale}); err != nil || n != 0 {
		t.Fatalf("again: %d final, %v; want 0", n, err)
	}
	da, _ := s.Delivery(ctx, a)
	db, _ := s.Delivery(ctx, b)
	if da.State != DeliverySent || da.Attempts != 3 || da.ProviderID != "<m1@example.com>" || da.SentAt.IsZero() {
		t.Errorf("a: %+v, want sent after 3 attempts", da)
	}
	if db.State != DeliveryFailed || db.LastError != "550 no such user" {
		t.Errorf("b: %+v, want failed with the 550", db)
	}
	if r, _ := s.RunByID(ctx, run.ID); r.State != RunPartiallyFailed || r.Error != "1 of 2 deliveries failed" {
		t.Errorf("run: %s %q, want partially_failed", r.State, r.Error)
	}
	if _, err := s.RecordOutcomes(ctx, []Outcome{{ID: a, State: "lost"}}); err == nil {
		t.Error("an outcome of an unknown state was recorded")
	}
}

// TestOutboxByOwner: outbox rows name their subscription's owner; the
// owners with rows are listed in order from any point, and each owner's rows
// read oldest first.
func TestOutboxByOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sub := openLedgerStore(t)
	for _, u := range []string{"u0", "u2"} {
		if err := s.CreateUser(ctx, User{ID: u, Domain: "default", Login: u + "@example.com", PasswordHash: "x",
			Created: ledgerT0, Updated: ledgerT0}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSubscription(ctx, Subscription{ID: "s-" + u, ProjectID: "p1", Owner: u, Title: "S", Enabled: true,
			Created: ledgerT0, Updated: ledgerT0}, Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	r1 := enqueue(t, s, sub, ledgerT0, "a", "b")
	r2 := enqueue(t, s, "s-u2", ledgerT0.Add(time.Minute), "c")
	r3 := enqueue(t, s, sub, ledgerT0.Add(2*time.Minute), "d")
	owners, err := s.OutboxOwners(ctx, "", 10)
	if err != nil || !slices.Equal(owners, []string{"u1", "u2"}) {
		t.Fatalf("owners = %v, %v; want u1, u2 (u0 has no rows)", owners, err)
	}
	if owners, err := s.OutboxOwners(ctx, "u1", 10); err != nil || !slices.Equal(owners, []string{"u2"}) {
		t.Fatalf("owners after u1 = %v, %v; want u2", owners, err)
	}
	items, err := s.OutboxOf(ctx, "u1", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		if it.Owner != "u1" {
			t.Errorf("row %s of owner %q", it.DeliveryID, it.Owner)
		}
		got = append(got, it.DeliveryID)
	}
	if want := []string{r1.ID + "-a", r1.ID + "-b", r3.ID + "-d"}; !slices.Equal(got, want) {
		t.Errorf("u1's rows = %v, want %v", got, want)
	}
	if items, err := s.OutboxOf(ctx, "u2", nil, 10); err != nil || len(items) != 1 || items[0].DeliveryID != r2.ID+"-c" {
		t.Errorf("u2's rows = %v, %v", items, err)
	}
	if items, err := s.OutboxOf(ctx, "u1", []string{"email"}, 10); err != nil || len(items) != 0 {
		t.Errorf("u1's rows but e-mail = %v, %v; want none (all are e-mail)", items, err)
	}
}
