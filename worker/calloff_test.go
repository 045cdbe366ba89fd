package worker

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/store"
)

// TestCallOffDuringAProbeLetsTheDeliveryGo: a delivery held for a receiver
// that refuses connections, called off while it is out probing the receiver,
// is let go as the probe comes back refused, as it would have been had it
// been waiting, rather than held again until the next probe finds it failed.
func TestCallOffDuringAProbeLetsTheDeliveryGo(t *testing.T) {
	t.Parallel()
	eachLedger(t, func(t *testing.T, e *env) {
		_, ids := e.enqueue(store.Payload{Subject: "Report", Text: "t"}, e.channel(hookTo("http://"+closedPort(t)+"/hook")))
		cfg := testConfig()
		cfg.Kinds = map[channels.Kind]KindConfig{webhook.Kind: webhookConfig()}
		// The next probe would come long after the test's wait.
		cfg.ProbeInterval, cfg.ProbeIntervalMax = 10*time.Millisecond, time.Hour
		probe := &pausingSender{Sender: webhookSender(t, cfg.SendTimeout), after: 1,
			entered: make(chan struct{}, 1), release: make(chan struct{})}
		heard := make(chan CallOff, 1)
		r := e.startWith(startNATS(t, t.TempDir()), []channels.Sender{probe}, cfg, Options{onCallOff: func(c CallOff) { heard <- c }})
		r.relay.Notify()
		r.await(t, ids[0], outcomeHeld)
		select {
		case <-probe.entered:
		case <-time.After(testTimeout):
			t.Fatal("the held delivery never probed its receiver")
		}
		const reason = "called off: the subscription was paused"
		if err := r.relay.CallOff(context.Background(), CallOff{Subscription: e.sub, Reason: reason}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
		case <-time.After(testTimeout):
			t.Fatal("the worker never heard the call-off")
		}
		close(probe.release)
		r.await(t, ids[0], outcomeDropped)
		e.stored(ids...)
		if d := e.delivery(ids[0]); d.State != store.DeliveryFailed || d.LastError != reason || d.Attempts != 0 {
			t.Errorf("delivery = %s after %d attempts (%q), want failed after none with the call-off's reason", d.State, d.Attempts, d.LastError)
		}
	})
}
