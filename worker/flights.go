package worker

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/store"
)

// maxOwnersPerPass bounds the owners one pass of the relay serves; those past
// it are served by the next passes, which begin where this one stopped.
const maxOwnersPerPass = 1024

// flights are the deliveries the relay published that are not yet known to
// be final, by owner. The relay publishes an owner's outbox rows only while
// the owner has fewer than Config.MaxInFlightPerOwner in flight, and serves
// the owners in turn, so that one owner's burst waits in the outbox, not in
// the stream ahead of everyone else's deliveries: another owner's delivery is
// behind at most that many of each busy owner, which a sender holds at once
// and takes round-robin by owner.
//
// Settled deliveries wake the relay only for an owner whose rows its room
// held back at the relay's last pass, and only once that room is a quarter of
// the most it may have in flight (at least one): a pass costs a few queries
// however few rows it publishes, and in a burst the sends settle a few at a
// time, so that waking it at each settle spent more on the passes than on
// the rows. The three quarters still in flight keep the senders busy
// meanwhile. New rows come with a Notify of their own, or the sweep.
type flights struct {
	max     int // Config.MaxInFlightPerOwner
	mu      sync.Mutex
	owners  map[string]map[string]struct{} // owner → delivery ids
	ownerOf map[string]string              // delivery id → owner
	held    map[string]bool                // owners whose rows wait, as the last pass saw
	next    string                         // the owner served first by the next pass
}

func newFlights(max int) *flights {
	return &flights{max: max, owners: map[string]map[string]struct{}{}, ownerOf: map[string]string{}, held: map[string]bool{}}
}

// wakeRoom is the room in flight at which settled deliveries of an owner
// whose rows wait wake the relay.
func (f *flights) wakeRoom() int { return max(1, f.max/4) }

// add records deliveries about to be published.
func (f *flights) add(items []store.OutboxItem) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range items {
		ids := f.owners[it.Owner]
		if ids == nil {
			ids = map[string]struct{}{}
			f.owners[it.Owner] = ids
		}
		ids[it.DeliveryID] = struct{}{}
		f.ownerOf[it.DeliveryID] = it.Owner
	}
}

// forget forgets deliveries the relay did not publish after all.
func (f *flights) forget(ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remove(ids)
}

// settled forgets deliveries that became final, and reports whether the
// relay should be woken: an owner whose rows wait has room enough now.
func (f *flights) settled(ids []string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.remove(ids)
}

// remove forgets deliveries and reports whether an owner whose rows wait has
// wakeRoom now; f.mu is held.
func (f *flights) remove(ids []string) bool {
	wake, limit := false, f.max-f.wakeRoom() // in flight at or below limit: room enough
	for _, id := range ids {
		owner, ok := f.ownerOf[id]
		if !ok {
			continue
		}
		delete(f.ownerOf, id)
		delete(f.owners[owner], id)
		n := len(f.owners[owner])
		if n == 0 {
			delete(f.owners, owner)
		}
		if f.held[owner] && n <= limit {
			wake = true
		}
	}
	return wake
}

// room is how many more deliveries of owner, which has rows waiting, may be
// in flight. Until drained says otherwise, the owner's settles wake the
// relay: marked with the same lock as the room is read, so that no settle
// after the read goes unheard.
func (f *flights) room(owner string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[owner] = true
	return f.max - len(f.owners[owner])
}

// drained records that the owner has no rows left waiting.
func (f *flights) drained(owner string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, owner)
}

// listed forgets that the room held back the rows of the owners a pass found
// none of: those not among owners, the list of every owner with rows.
func (f *flights) listed(owners []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for o := range f.held {
		if !slices.Contains(owners, o) {
			delete(f.held, o)
		}
	}
}

// ids returns every delivery in flight.
func (f *flights) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Keys(f.ownerOf))
}

// nextItems returns the outbox rows to publish next: owner by owner in turn,
// from the one after the owner served last, each owner's oldest first and no
// more than its room, up to Config.RelayBatch in all. more reports whether an
// owner may have rows left that its room would let go: its share of the batch
// stopped it, not its room or its rows. It notes the owners whose rows wait,
// whose settles wake the relay (see flights).
func (r *Relay) nextItems(ctx context.Context) (items []store.OutboxItem, more bool, err error) {
	f := r.flights
	f.mu.Lock()
	start := f.next
	f.mu.Unlock()
	owners, err := r.st.OutboxOwners(ctx, start, maxOwnersPerPass)
	if err != nil {
		return nil, false, err
	}
	if len(owners) < maxOwnersPerPass && start != "" { // wrap around
		more, err := r.st.OutboxOwners(ctx, "", maxOwnersPerPass-len(owners))
		if err != nil {
			return nil, false, err
		}
		for _, o := range more {
			if o > start || slices.Contains(owners, o) {
				break
			}
			owners = append(owners, o)
		}
	}
	if len(owners) < maxOwnersPerPass {
		f.listed(owners)
	}
	more = len(owners) == maxOwnersPerPass
	for _, owner := range owners {
		left := r.cfg.RelayBatch - len(items)
		if left <= 0 {
			return items, true, nil
		}
		room := f.room(owner)
		if room <= 0 {
			continue
		}
		limit := min(room, max(left/len(owners), 1), left)
		got, err := r.st.OutboxOf(ctx, owner, limit)
		if err != nil {
			return nil, false, err
		}
		switch {
		case len(got) < limit:
			f.drained(owner)
		case limit < room:
			more = true // its share of the batch stopped it
		}
		items = append(items, got...)
		f.mu.Lock()
		f.next = owner
		f.mu.Unlock()
	}
	return items, more, nil
}

// Settled tells the relay that deliveries became final, so that their owners
// may have more in flight. The SQLite ledger's writes and the outcomes the
// relay records call it; a delivery it is never told of is found by the
// sweep's check of what is in flight.
func (r *Relay) Settled(ids ...string) {
	if r.flights.settled(ids) {
		r.Notify()
	}
}

// checkFlights forgets the deliveries in flight that the store holds final or
// no longer holds: settled without a word to the relay (another process's
// ledger, a deletion).
func (r *Relay) checkFlights(ctx context.Context) error {
	ids := r.flights.ids()
	if len(ids) == 0 {
		return nil
	}
	entries, err := r.st.LedgerEntries(ctx, ids...)
	if err != nil {
		return err
	}
	var gone []string
	for _, id := range ids {
		if e, ok := entries[id]; !ok || e.State != store.DeliveryPending {
			gone = append(gone, id)
		}
	}
	r.Settled(gone...)
	return nil
}

// loadFlights reads what was in flight when the relay last stopped: the
// deliveries published and not yet final.
func (r *Relay) loadFlights(ctx context.Context) error {
	items, err := r.st.StalePending(ctx, r.now().Add(time.Hour), 1<<20)
	if err != nil {
		return err
	}
	r.flights.add(items)
	return nil
}
