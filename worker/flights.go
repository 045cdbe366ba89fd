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
//
// Settled deliveries wake the relay only for an owner whose rows its room
// held back at the relay's last pass, and only once the room of the
// delivery's kind is a quarter of the most it may have in flight (at least
// one): a pass costs a few queries however few rows it publishes, and in a
// burst the sends settle a few at a time, so that waking it at each settle
// spent more on the passes than on the rows. The three quarters still in
// flight keep the senders busy meanwhile. New rows come with a Notify of
// their own, or the sweep.
type flights struct {
	max    int // Config.MaxInFlightPerOwner
	mu     sync.Mutex
	lanes  map[lane]map[string]struct{} // delivery ids
	laneOf map[string]lane              // delivery id → its lane
	held   map[string]bool              // owners whose rows wait, as the last pass saw
	next   string                       // the owner served first by the next pass
}

// lane is an owner's deliveries of one kind.
type lane struct{ owner, kind string }

func newFlights(max int) *flights {
	return &flights{max: max, lanes: map[lane]map[string]struct{}{}, laneOf: map[string]lane{}, held: map[string]bool{}}
}

// wakeRoom is the room in flight at which settled deliveries of an owner
// whose rows wait wake the relay.
func (f *flights) wakeRoom() int { return max(1, f.max/4) }

// add records deliveries about to be published.
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
		l, ok := f.laneOf[id]
		if !ok {
			continue
		}
		delete(f.laneOf, id)
		delete(f.lanes[l], id)
		n := len(f.lanes[l])
		if n == 0 {
			delete(f.lanes, l)
		}
		if f.held[l.owner] && n <= limit {
			wake = true
		}
	}
	return wake
}

// room is how many more deliveries of owner, which has rows waiting, may be
// in flight, by kind, for the kinds it has in flight (any other kind has
// Config.MaxInFlightPerOwner). Until drained says otherwise, the owner's
// settles wake the relay: marked with the same lock as the room is read, so
// that no settle after the read goes unheard.
func (f *flights) room(owner string) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[owner] = true
	out := map[string]int{}
	for l, ids := range f.lanes {
		if l.owner == owner {
			out[l.kind] = f.max - len(ids)
		}
	}
	return out
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
	return slices.Collect(maps.Keys(f.laneOf))
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
		got, drained, full, err := r.ownerItems(ctx, owner, min(max(left/len(owners), 1), left))
		if err != nil {
			return nil, false, err
		}
		switch {
		case drained:
			f.drained(owner)
		case full:
			more = true // its share of the batch stopped it
		}
		items = append(items, got...)
		f.mu.Lock()
		f.next = owner
		f.mu.Unlock()
	}
	return items, more, nil
}

// ownerItems returns up to n of owner's outbox rows, oldest first, leaving
// out those of a kind the owner has no room in flight for. drained reports
// that the owner has no rows left waiting (none of a kind without room
// either, as far as it can tell: with a kind full it cannot); full that n
// stopped it, not the room.
func (r *Relay) ownerItems(ctx context.Context, owner string, n int) (items []store.OutboxItem, drained, full bool, err error) {
	room := r.flights.room(owner)
	noRoom := make([]string, 0, len(room))
	for kind, left := range room {
		if left <= 0 {
			noRoom = append(noRoom, kind)
		}
	}
	items, err = r.st.OutboxOf(ctx, owner, noRoom, n)
	if err != nil {
		return nil, false, false, err
	}
	got := len(items)
	taken := map[string]int{}
	items = slices.DeleteFunc(items, func(it store.OutboxItem) bool {
		left, bounded := room[it.Kind]
		if !bounded {
			left = r.cfg.MaxInFlightPerOwner
		}
		taken[it.Kind]++
		return taken[it.Kind] > left
	})
	trimmed := len(items) < got
	return items, got < n && !trimmed && len(noRoom) == 0, got == n && !trimmed, nil
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
	items, err := r.st.StalePending(ctx, r.clock.Now().Add(time.Hour), 1<<20)
	if err != nil {
		return err
	}
	r.flights.add(items)
	return nil
}
