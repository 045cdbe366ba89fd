package replica

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/worker"
)

// testTTL is the lease's term in tests: short, since the server's clock ages it.
const testTTL = time.Second

// waitWithin bounds every wait of a test.
const waitWithin = 20 * time.Second

// leaseBucket starts an embedded NATS server and returns its control bucket.
func leaseBucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	n, err := worker.StartEmbedded(t.TempDir(), worker.EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	kv, err := worker.OpenControlBucket(context.Background(), n.JetStream(), nil, worker.DefaultControlBucket, 1, testTTL)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func holder(name, folder string) Holder {
	return Holder{Name: name, Folder: folder, Incarnation: name + "-1"}
}

// acquireAsync asks for l in the background and returns a channel that
// receives when Acquire returned, with when.
func acquireAsync(t *testing.T, l *Lease) <-chan time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	got := make(chan time.Time, 1)
	go func() {
		if err := l.Acquire(ctx); err == nil {
			got <- time.Now()
		}
	}()
	return got
}

// TestLeaseHasOneHolderAndPassesOnRelease: while A holds and renews the
// lease, B waits, and B's Check names A; once A releases it, B holds it at
// once and A's Check fails.
func TestLeaseHasOneHolderAndPassesOnRelease(t *testing.T) {
	t.Parallel()
	kv := leaseBucket(t)
	ctx := context.Background()
	a, b := NewLease(kv, holder("A", "fa"), testTTL, nil), NewLease(kv, holder("B", "fb"), testTTL, nil)
	if err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	keep, stop := context.WithCancel(ctx)
	kept := make(chan error, 1)
	go func() { kept <- a.Keep(keep, KeepHooks{}) }()
	got := acquireAsync(t, b)
	select {
	case <-got:
		t.Fatal("B took the lease while A renewed it")
	case <-time.After(4 * testTTL): // A renews it four times a term: four terms pass
	}
	if err := a.Check(); err != nil {
		t.Errorf("A's Check while it holds the lease: %v", err)
	}
	if err := b.Check(); err == nil || !strings.Contains(err.Error(), "held by A") {
		t.Errorf("B's Check while A holds the lease: %v, want it to name A", err)
	}
	stop()
	if err := <-kept; err != nil {
		t.Errorf("Keep: %v", err)
	}
	released := time.Now()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err == nil {
		t.Error("A's Check after it released the lease passes")
	}
	select {
	case at := <-got:
		if took := at.Sub(released); took > testTTL/2 {
			t.Errorf("B took the released lease %v after it was released, want within a tenth of the term", took)
		}
	case <-time.After(waitWithin):
		t.Fatal("B did not take the released lease")
	}
	if err := b.Check(); err != nil {
		t.Errorf("B's Check once it holds the lease: %v", err)
	}
}

// TestLeaseOfADeadHolderLapsesAfterItsValidity: A takes the lease and never
// renews it (it died). B takes it once the term passes, and A's own validity
// had ended a fifth of the term before: the two never hold it at once.
func TestLeaseOfADeadHolderLapsesAfterItsValidity(t *testing.T) {
	t.Parallel()
	kv := leaseBucket(t)
	a, b := NewLease(kv, holder("A", "fa"), testTTL, nil), NewLease(kv, holder("B", "fb"), testTTL, nil)
	if err := a.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	took := acquireAsync(t, b)
	var at time.Time
	select {
	case at = <-took:
	case <-time.After(waitWithin):
		t.Fatal("B did not take the lapsed lease")
	}
	a.mu.Lock()
	aValid := a.valid
	a.mu.Unlock()
	// A counts it valid no later than a fifth of the term before B can take
	// it: the time a commit A allowed just before may still take.
	if gap := at.Sub(aValid); gap < testTTL/5 {
		t.Errorf("A counted the lease valid until %v, %v before B took it at %v; want at least %v before",
			aValid, gap, at, testTTL/5)
	}
	if err := a.Check(); err == nil {
		t.Error("A's Check passes after B took the lease")
	}
}

// TestLeaseOfTheSameFolderIsTakenOverAtOnce: a process that holds the data
// folder's lock takes the lease over from an earlier process of that folder
// without waiting for the term: that process is gone.
func TestLeaseOfTheSameFolderIsTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	kv := leaseBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTTL/2)
	defer cancel()
	if err := NewLease(kv, holder("A", "f"), testTTL, nil).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	again := NewLease(kv, Holder{Name: "A again", Folder: "f", Incarnation: "A-2"}, testTTL, nil)
	if err := again.Acquire(ctx); err != nil {
		t.Fatalf("the folder's next process waited: %v", err)
	}
}

// TestLeaseTakenByAnotherIsLostAtOnce: when another process's entry replaces
// A's (an operator's hand, or a lease A's clock thought valid), A's next
// renewal finds it: Lost is closed, Keep says who took it, and Check fails.
func TestLeaseTakenByAnotherIsLostAtOnce(t *testing.T) {
	t.Parallel()
	kv := leaseBucket(t)
	ctx := context.Background()
	a := NewLease(kv, holder("A", "fa"), testTTL, nil)
	if err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	kept := make(chan error, 1)
	go func() { kept <- a.Keep(ctx, KeepHooks{}) }()
	intruder, _ := json.Marshal(holder("C", "fc"))
	if _, err := kv.Put(ctx, leaseKey, intruder); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Lost():
	case <-time.After(waitWithin):
		t.Fatal("A did not notice the lease was taken")
	}
	if err := <-kept; err == nil || !strings.Contains(err.Error(), "C since") {
		t.Errorf("Keep: %v, want it to name C", err)
	}
	if err := a.Check(); err == nil {
		t.Error("A's Check passes after it lost the lease")
	}
}

// flaky is the bucket as a holder reaches it: while down, no write gets
// through, as when the NATS cluster cannot be reached or elects a leader.
type flaky struct {
	jetstream.KeyValue
	down atomic.Bool
}

var errDown = errors.New("nats: no responders available for request")

func (f *flaky) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if f.down.Load() {
		return 0, errDown
	}
	return f.KeyValue.Update(ctx, key, value, rev)
}

func (f *flaky) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if f.down.Load() {
		return 0, errDown
	}
	return f.KeyValue.Create(ctx, key, value, opts...)
}

func (f *flaky) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.KeyValue.Get(ctx, key)
}

func (f *flaky) History(ctx context.Context, key string, opts ...jetstream.WatchOpt) ([]jetstream.KeyValueEntry, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.KeyValue.History(ctx, key, opts...)
}

func (f *flaky) Status(ctx context.Context) (jetstream.KeyValueStatus, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.KeyValue.Status(ctx)
}

// hooked is a Keep of l in the background whose hooks report on channels.
type hooked struct {
	lapsed   chan error
	regained chan bool
	kept     chan error
}

func keepHooked(t *testing.T, l *Lease) *hooked {
	t.Helper()
	h := &hooked{lapsed: make(chan error, 4), regained: make(chan bool, 4), kept: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		h.kept <- l.Keep(ctx, KeepHooks{
			Lapsed:   func(err error) { h.lapsed <- err },
			Regained: func(_ context.Context, recreated bool) error { h.regained <- recreated; return nil },
		})
	}()
	return h
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitWithin):
		t.Fatalf("no %s within %v", what, waitWithin)
	}
	var zero T
	return zero
}

// TestLeaseLapsesWhileTheBucketIsAwayAndIsHeldAgain: a holder that cannot
// renew stops counting on the lease once its validity ends (Check fails, the
// Lapsed hook is called), and holds it again once the bucket answers: its own
// entry when it is still there, a new one once it lapsed too.
func TestLeaseLapsesWhileTheBucketIsAwayAndIsHeldAgain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		away      time.Duration
		recreated bool
	}{
		{"short", 0, false},         // the entry may outlive the holder's validity
		{"long", 3 * testTTL, true}, // the entry lapses too
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			kv := &flaky{KeyValue: leaseBucket(t)}
			a := NewLease(kv, holder("A", "fa"), testTTL, nil)
			if err := a.Acquire(context.Background()); err != nil {
				t.Fatal(err)
			}
			h := keepHooked(t, a)
			kv.down.Store(true)
			within(t, h.lapsed, "lapse")
			if err := a.Check(); err == nil || !strings.Contains(err.Error(), "lapsed") {
				t.Errorf("Check while the lease lapsed: %v", err)
			}
			time.Sleep(c.away) // the outage
			kv.down.Store(false)
			if recreated := within(t, h.regained, "regain"); c.recreated && !recreated {
				t.Errorf("held again with recreated %v, want %v", recreated, c.recreated)
			}
			if err := a.Check(); err != nil {
				t.Errorf("Check once held again: %v", err)
			}
		})
	}
}

// TestLeaseTakenDuringALapseIsLost: when another process took the lease
// while the holder could not renew it, the holder loses it for good.
func TestLeaseTakenDuringALapseIsLost(t *testing.T) {
	t.Parallel()
	kv := &flaky{KeyValue: leaseBucket(t)}
	a, b := NewLease(kv, holder("A", "fa"), testTTL, nil), NewLease(kv.KeyValue, holder("B", "fb"), testTTL, nil)
	if err := a.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := keepHooked(t, a)
	kv.down.Store(true)
	within(t, h.lapsed, "lapse")
	within(t, acquireAsync(t, b), "B's take-over")
	kv.down.Store(false)
	if err := within(t, h.kept, "the end of Keep"); err == nil || !strings.Contains(err.Error(), "B since") {
		t.Errorf("Keep: %v, want it to name B", err)
	}
	select {
	case <-h.regained:
		t.Error("A held the lease again after B took it")
	default:
	}
	if err := a.Check(); err == nil {
		t.Error("A's Check passes after B took the lease")
	}
}

// TestLeaseLapsedByTheBucketGoesBackToItsHolder: while the bucket answers
// nobody (it elects a leader, its NATS server lost), the holder's entry
// lapses. Once it answers again, the holder, alive, holds the lease again,
// and the process waiting for it leaves it to the holder rather than take
// it over.
func TestLeaseLapsedByTheBucketGoesBackToItsHolder(t *testing.T) {
	t.Parallel()
	kv := &flaky{KeyValue: leaseBucket(t)}
	a, b := NewLease(kv, holder("A", "fa"), testTTL, nil), NewLease(kv, holder("B", "fb"), testTTL, nil)
	if err := a.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := keepHooked(t, a)
	took := acquireAsync(t, b)
	waitSeesHeld(t, b, "A")
	kv.down.Store(true)
	within(t, h.lapsed, "lapse")
	time.Sleep(3 * testTTL) // the election: the entry lapses too
	kv.down.Store(false)
	select {
	case recreated := <-h.regained:
		if !recreated {
			t.Errorf("A held the lease again with recreated %v, want a new entry", recreated)
		}
	case err := <-h.kept:
		t.Fatalf("A lost the lease once the bucket answered again: %v", err)
	case <-time.After(waitWithin):
		t.Fatalf("A did not hold the lease again within %v", waitWithin)
	}
	wantLeftToA(t, a, b, took)
}

// wantLeftToA fails t unless B, whose Acquire reports on took, leaves the
// lease to A, which holds it again, for two terms, and names A.
func wantLeftToA(t *testing.T, a, b *Lease, took <-chan time.Time) {
	t.Helper()
	select {
	case <-took:
		t.Fatal("B took the lease over from A, which held it again")
	case <-time.After(2 * testTTL): // B asks twenty times
	}
	if err := a.Check(); err != nil {
		t.Errorf("A's Check once it held the lease again: %v", err)
	}
	if err := b.Check(); err == nil || !strings.Contains(err.Error(), "held by A") {
		t.Errorf("B's Check: %v, want it to name A", err)
	}
}

// waitSeesHeld waits until l, waiting for the lease, has seen name hold it.
func waitSeesHeld(t *testing.T, l *Lease, name string) {
	t.Helper()
	for deadline := time.Now().Add(waitWithin); ; time.Sleep(l.ttl / 10) { // l asks a tenth of the term apart
		if err := l.Check(); err != nil && strings.Contains(err.Error(), "held by "+name) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never seen to hold the lease: %v", name, l.Check())
		}
	}
}
