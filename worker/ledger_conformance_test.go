package worker

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/heraldhq/herald/store"
)

// ledgerSetup is a fresh ledger of one implementation.
type ledgerSetup struct {
	l Ledger
	// second returns another ledger of the same store or bucket, as a second
	// process (or, for SQLite, a second ledger in one process) would have.
	second func() Ledger
	// known returns the ids of n new deliveries the ledger may be asked about.
	known func(n int) []string
	// unknown returns the id of a delivery the ledger never heard of.
	unknown func() string
}

// ledgerImpls is every Ledger, each giving a fresh one per test.
var ledgerImpls = []struct {
	name string
	new  func(t *testing.T) ledgerSetup
}{
	{"SQLite", newSQLiteLedgerSetup},
	{"KV", newKVLedgerSetup},
}

func newSQLiteLedgerSetup(t *testing.T) ledgerSetup {
	e := newEnv(t)
	var chs []string // a run has one delivery per channel
	return ledgerSetup{
		l:      NewSQLiteLedger(e.st, nil, nil),
		second: func() Ledger { return NewSQLiteLedger(e.st, nil, nil) },
		known: func(n int) []string {
			for len(chs) < n {
				chs = append(chs, e.channel(mailTo(fmt.Sprintf("to%d@example.com", len(chs)))))
			}
			_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, chs[:n]...)
			return ids
		},
		unknown: func() string { return store.NewID(20) },
	}
}

func newKVLedgerSetup(t *testing.T) ledgerSetup {
	n := startNATS(t, t.TempDir())
	owners := 0
	newLedger := func() Ledger {
		owners++
		l, err := NewKVLedger(awaitCtx(t), n.JetStream(), KVLedgerConfig{Owner: fmt.Sprintf("owner-%d", owners)})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	return ledgerSetup{
		l:       newLedger(),
		second:  newLedger,
		known:   randomIDs,
		unknown: func() string { return store.NewID(20) },
	}
}

// randomIDs returns n new delivery ids.
func randomIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = store.NewID(20)
	}
	return ids
}

// forEachLedger runs test as a subtest for each implementation.
func forEachLedger(t *testing.T, test func(t *testing.T, s ledgerSetup)) {
	for _, impl := range ledgerImpls {
		t.Run(impl.name, func(t *testing.T) {
			t.Parallel()
			test(t, impl.new(t))
		})
	}
}

// claim claims ids and fails the test unless each has entry want.
func claim(t *testing.T, l Ledger, ids []string, want Entry) {
	t.Helper()
	got, err := l.Claim(awaitCtx(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("claim of %d ids gave %d entries: %v", len(ids), len(got), got)
	}
	for _, id := range ids {
		if e, ok := got[id]; !ok || e != want {
			t.Fatalf("entry of %s = %+v (found %v), want %+v", id, e, ok, want)
		}
	}
}

// TestLedgerClaimNew: a delivery never written to is pending with no attempt.
func TestLedgerClaimNew(t *testing.T) {
	t.Parallel()
	forEachLedger(t, func(t *testing.T, s ledgerSetup) {
		claim(t, s.l, s.known(3), Entry{State: store.DeliveryPending})
	})
}

// TestLedgerSentIsFinal: a sent delivery stays sent, and every later outcome
// is refused or changes nothing.
func TestLedgerSentIsFinal(t *testing.T) {
	t.Parallel()
	forEachLedger(t, func(t *testing.T, s ledgerSetup) {
		ctx := awaitCtx(t)
		ids := s.known(1)
		id := ids[0]
		claim(t, s.l, ids, Entry{State: store.DeliveryPending})
		if ok, err := s.l.Sent(ctx, id, "<p1@example.com>"); err != nil || !ok {
			t.Fatalf("Sent = %v, %v; want true", ok, err)
		}
		sent := Entry{State: store.DeliverySent, Attempts: 1}
		claim(t, s.l, ids, sent)
		if ok, err := s.l.Sent(ctx, id, "<p2@example.com>"); err != nil || ok {
			t.Fatalf("second Sent = %v, %v; want false", ok, err)
		}
		if n, err := s.l.Attempt(ctx, id, "timeout"); !errors.Is(err, ErrFinal) {
			t.Fatalf("Attempt = %d, %v; want ErrFinal", n, err)
		}
		if ok, err := s.l.Failed(ctx, id, "gave up"); err != nil || ok {
			t.Fatalf("Failed = %v, %v; want false", ok, err)
		}
		claim(t, s.l, ids, sent)
	})
}

// TestLedgerAttemptsThenFailed: failed attempts count up and keep the
// delivery pending with the last error, until it is given up.
func TestLedgerAttemptsThenFailed(t *testing.T) {
	t.Parallel()
	forEachLedger(t, func(t *testing.T, s ledgerSetup) {
		ctx := awaitCtx(t)
		ids := s.known(1)
		id := ids[0]
		claim(t, s.l, ids, Entry{State: store.DeliveryPending})
		for i, errText := range []string{"421 busy", "451 try later"} {
			if n, err := s.l.Attempt(ctx, id, errText); err != nil || n != i+1 {
				t.Fatalf("Attempt %d = %d, %v", i+1, n, err)
			}
		}
		claim(t, s.l, ids, Entry{State: store.DeliveryPending, Attempts: 2, LastError: "451 try later"})
		if ok, err := s.l.Failed(ctx, id, "gave up after 2 attempts"); err != nil || !ok {
			t.Fatalf("Failed = %v, %v; want true", ok, err)
		}
		claim(t, s.l, ids, Entry{State: store.DeliveryFailed, Attempts: 2, LastError: "gave up after 2 attempts"})
	})
}

// TestLedgerConcurrentSent: sends of many deliveries recorded at once are
// each recorded once.
func TestLedgerConcurrentSent(t *testing.T) {
	t.Parallel()
	const goroutines, each = 16, 16
	forEachLedger(t, func(t *testing.T, s ledgerSetup) {
		ctx := awaitCtx(t)
		ids := s.known(goroutines * each)
		claim(t, s.l, ids, Entry{State: store.DeliveryPending})
		start := make(chan struct{})
		errs := make(chan error, len(ids))
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				<-start
				for _, id := range ids[g*each : (g+1)*each] {
					ok, err := s.l.Sent(ctx, id, "<"+id+"@example.com>")
					if err == nil && !ok {
						err = fmt.Errorf("Sent %s = false", id)
					}
					if err != nil {
						errs <- err
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		claim(t, s.l, ids, Entry{State: store.DeliverySent, Attempts: 1})
	})
}

// TestLedgerSentRace: two ledgers that both claimed a delivery and both
// record its send at once (a holder presumed dead and the process its
// message went to next): exactly one records it.
func TestLedgerSentRace(t *testing.T) {
	t.Parallel()
	const rounds = 8
	forEachLedger(t, func(t *testing.T, s ledgerSetup) {
		ctx := awaitCtx(t)
		ledgers := [2]Ledger{s.l, s.second()}
		for _, id := range s.known(rounds) {
			var claims, sends [2]error
			var sent [2]bool
			race := func(do func(i int)) {
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range ledgers {
					wg.Go(func() { <-start; do(i) })
				}
				close(start)
				wg.Wait()
			}
			race(func(i int) {
				var got map[string]Entry
				got, claims[i] = ledgers[i].Claim(ctx, []string{id})
				// The later of two live claims may find the first (Busy).
				if e := got[id]; claims[i] == nil && (e.State != store.DeliveryPending || e.Attempts != 0) {
					claims[i] = fmt.Errorf("entry %+v", e)
				}
			})
			race(func(i int) { sent[i], sends[i] = ledgers[i].Sent(ctx, id, fmt.Sprintf("<%s-%d@example.com>", id, i)) })
			if err := errors.Join(claims[0], claims[1], sends[0], sends[1]); err != nil {
				t.Fatalf("delivery %s: %v", id, err)
			}
			if sent[0] == sent[1] {
				t.Fatalf("delivery %s: Sent by both ledgers = %v, %v; want exactly one true", id, sent[0], sent[1])
			}
			claim(t, s.l, []string{id}, Entry{State: store.DeliverySent, Attempts: 1})
		}
	})
}

// TestLedgerUnknown: an outcome of a delivery the ledger never heard of is
// refused.
func TestLedgerUnknown(t *testing.T) {
	t.Parallel()
	forEachLedger(t, func(t *testing.T, s ledgerSetup) {
		ctx := awaitCtx(t)
		id := s.unknown()
		if n, err := s.l.Attempt(ctx, id, "timeout"); !errors.Is(err, ErrUnknown) {
			t.Fatalf("Attempt = %d, %v; want ErrUnknown", n, err)
		}
		if ok, err := s.l.Failed(ctx, id, "gave up"); !errors.Is(err, ErrUnknown) || ok {
			t.Fatalf("Failed = %v, %v; want ErrUnknown", ok, err)
		}
	})
}
