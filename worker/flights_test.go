package worker

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// TestSettledWakeTheRelayAtAQuarterOfTheRoom: settled deliveries wake the
// relay only for an owner whose rows wait, and only once its room in flight
// is a quarter of the most it may have; another owner's settles, and those of
// an owner with nothing waiting, do not.
func TestSettledWakeTheRelayAtAQuarterOfTheRoom(t *testing.T) {
	t.Parallel()
	f := newFlights(16) // wakes when 4 are free
	var items []store.OutboxItem
	for i := range 20 {
		items = append(items, store.OutboxItem{DeliveryID: fmt.Sprint("a", i), Owner: "a", Kind: "email"})
	}
	items = append(items, store.OutboxItem{DeliveryID: "b0", Owner: "b", Kind: "email"}, store.OutboxItem{DeliveryID: "b1", Owner: "b", Kind: "email"})
	f.add(items[:16])
	f.add(items[20:])
	if room := f.room("a"); room["email"] != 0 { // a pass finds a's rows waiting
		t.Fatalf("room %v, want none for email", room)
	}
	var wakes []int
	for i := range 12 {
		if f.settled([]string{fmt.Sprint("a", i)}) {
			wakes = append(wakes, i+1)
		}
	}
	if !slices.Equal(wakes, []int{4, 5, 6, 7, 8, 9, 10, 11, 12}) {
		t.Errorf("woken after settles %v of 12, want from the 4th on", wakes)
	}
	if f.settled([]string{"b0", "unknown"}) {
		t.Error("an owner with nothing waiting woke the relay")
	}
	f.drained("a") // a pass published the rest of a's rows
	if f.settled([]string{"a12"}) {
		t.Error("a settle woke the relay with nothing of its owner waiting")
	}
	if f.room("a")["email"] != 13 || !f.settled([]string{"a13"}) {
		t.Error("a's rows wait again, and a settle did not wake the relay")
	}
}

// TestSettledBeforeTheirPublishAckLeaveNoFlight: a send may settle before
// JetStream's acknowledgement of its publish reaches the relay. Such a
// delivery must not stay counted in flight: with no sweep to find it, the
// owner's room would shrink for good and the relay stop publishing.
func TestSettledBeforeTheirPublishAckLeaveNoFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	ch := e.channel(peer.Channel())
	const n = 300
	var ids []string
	for i := range n {
		_, got := e.enqueue(store.Payload{Subject: "M " + strconv.Itoa(i), Text: "t"}, ch)
		ids = append(ids, got...)
	}
	cfg := testConfig()
	cfg.MaxInFlightPerOwner = 8
	cfg.RelayBatch = 8
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Concurrency: 8}}
	// The fixture's sweep never ticks: only settles wake the relay.
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, cfg)
	r.relay.Notify()
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	if left := r.relay.flights.ids(); len(left) != 0 {
		t.Errorf("%d deliveries still counted in flight after every one was sent", len(left))
	}
}
