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
type flights struct {
	mu      sync.Mutex
	owners  map[string]map[string]struct{} // owner → delivery ids
	ownerOf map[string]string              // delivery id → owner
	next    string                         // the owner served first by the next pass
}

func newFlights() *flights {
	return &flights{owners: map[string]map[string]struct{}{}, ownerOf: map[string]string{}}
}

// add records published deliveries.
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

// settled forgets deliveries that became final, and reports whether one of
// them was in flight.
func (f *flights) settled(ids []string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	any := false
	for _, id := range ids {
		owner, ok := f.ownerOf[id]
		if !ok {
			continue
		}
		any = true
		delete(f.ownerOf, id)
		if delete(f.owners[owner], id); len(f.owners[owner]) == 0 {
			delete(f.owners, owner)
		}
	}
	return any
}

// room is how many more deliveries of owner may be in flight.
func (f *flights) room(owner string, max int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return max - len(f.owners[owner])
}

// ids returns every delivery in flight.
func (f *flights) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Keys(f.ownerOf))
}

// nextItems returns the outbox rows to publish next: owner by owner in turn,
// from the one after the owner served last, each owner's oldest first and no
// more than its room, up to Config.RelayBatch in all.
func (r *Relay) nextItems(ctx context.Context) ([]store.OutboxItem, error) {
	f := r.flights
	f.mu.Lock()
	start := f.next
	f.mu.Unlock()
	owners, err := r.st.OutboxOwners(ctx, start, maxOwnersPerPass)
	if err != nil {
		return nil, err
	}
	if len(owners) < maxOwnersPerPass && start != "" { // wrap around
		more, err := r.st.OutboxOwners(ctx, "", maxOwnersPerPass-len(owners))
		if err != nil {
			return nil, err
		}
		for _, o := range more {
			if o > start || slices.Contains(owners, o) {
				break
			}
			owners = append(owners, o)
		}
	}
	var items []store.OutboxItem
	for _, owner := range owners {
		left := r.cfg.RelayBatch - len(items)
		if left <= 0 {
			break
		}
		room := f.room(owner, r.cfg.MaxInFlightPerOwner)
		if room <= 0 {
			continue
		}
		got, err := r.st.OutboxOf(ctx, owner, min(room, max(left/len(owners), 1), left))
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
		f.mu.Lock()
		f.next = owner
		f.mu.Unlock()
	}
	return items, nil
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
