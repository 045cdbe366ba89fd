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
// be final, by owner and kind. The relay publishes an owner's outbox rows of
// a kind only while the owner has fewer than Config.MaxInFlightPerOwner of
// that kind in flight, and serves the owners in turn, so that one owner's
// burst waits in the outbox, not in the stream ahead of everyone else's
// deliveries: another owner's delivery is behind at most that many of each
// busy owner, which a sender holds at once and takes round-robin by owner.
// The bound is per kind, so that an owner's webhooks held for a receiver
// that takes nothing do not hold the same owner's mail.
type flights struct {
	mu     sync.Mutex
	lanes  map[lane]map[string]struct{} // delivery ids
	laneOf map[string]lane              // delivery id → its lane
	next   string                       // the owner served first by the next pass
}

// lane is an owner's deliveries of one kind.
type lane struct{ owner, kind string }

func newFlights() *flights {
	return &flights{lanes: map[lane]map[string]struct{}{}, laneOf: map[string]lane{}}
}

// add records published deliveries.
func (f *flights) add(items []store.OutboxItem) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range items {
		l := lane{it.Owner, it.Kind}
		ids := f.lanes[l]
		if ids == nil {
			ids = map[string]struct{}{}
			f.lanes[l] = ids
		}
		ids[it.DeliveryID] = struct{}{}
		f.laneOf[it.DeliveryID] = l
	}
}

// settled forgets deliveries that became final, and reports whether one of
// them was in flight.
func (f *flights) settled(ids []string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	any := false
	for _, id := range ids {
		l, ok := f.laneOf[id]
		if !ok {
			continue
		}
		any = true
		delete(f.laneOf, id)
		if delete(f.lanes[l], id); len(f.lanes[l]) == 0 {
			delete(f.lanes, l)
		}
	}
	return any
}

// room is how many more deliveries of owner of each kind may be in flight,
// for the kinds it has in flight (any other kind has max).
func (f *flights) room(owner string, max int) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for l, ids := range f.lanes {
		if l.owner == owner {
			out[l.kind] = max - len(ids)
		}
	}
	return out
}

// ids returns every delivery in flight.
func (f *flights) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Keys(f.laneOf))
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
		got, err := r.ownerItems(ctx, owner, min(max(left/len(owners), 1), left))
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

// ownerItems returns up to n of owner's outbox rows, oldest first, leaving
// out those of a kind the owner has no room in flight for.
func (r *Relay) ownerItems(ctx context.Context, owner string, n int) ([]store.OutboxItem, error) {
	room := r.flights.room(owner, r.cfg.MaxInFlightPerOwner)
	full := make([]string, 0, len(room))
	for kind, left := range room {
		if left <= 0 {
			full = append(full, kind)
		}
	}
	items, err := r.st.OutboxOf(ctx, owner, full, n)
	if err != nil {
		return nil, err
	}
	taken := map[string]int{}
	return slices.DeleteFunc(items, func(it store.OutboxItem) bool {
		left, bounded := room[it.Kind]
		if !bounded {
			left = r.cfg.MaxInFlightPerOwner
		}
		taken[it.Kind]++
		return taken[it.Kind] > left
	}), nil
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
