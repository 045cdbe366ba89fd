package worker

import (
	"sync"
	"testing"
)

// TestPartsStartingTogetherCreateTheStream has several parts find no stream
// and set it up at once, as a process's relay and workers do when they
// start: each must get the stream, and none may ask for an update of it (an
// update under the consumers the others are creating is a data race in
// nats-server). The connection hears its own API requests; a flush after the
// last answer makes sure every request it sent has come back.
func TestPartsStartingTogetherCreateTheStream(t *testing.T) {
	t.Parallel()
	n := startNATS(t, t.TempDir())
	updates, err := n.nc.SubscribeSync("$JS.API.STREAM.UPDATE.>")
	if err != nil {
		t.Fatal(err)
	}
	creations, err := n.nc.SubscribeSync("$JS.API.STREAM.CREATE.>")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := ensureStream(t.Context(), testLogger(t), n.JetStream(), cfg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := n.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	u, _, _ := updates.Pending()
	c, _, _ := creations.Pending()
	if u != 0 || c == 0 {
		t.Errorf("%d requests to update the stream and %d to create it, want none and at least one", u, c)
	}
}
