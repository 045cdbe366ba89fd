package worker

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
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
		_, ids := e.enqueue(store.Payload{Subject: "Report", Text: "t"}, e.channel(hookTo("http://"+channeltest.ClosedPort(t)+"/hook")))
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

// TestHeldDeliveryIsProbedWhileItsLastSendLetsGo: a delivery held for a
// receiver that refuses connections is back among the waiting before the
// send that found the receiver away has let go of it, and its probe may be
// picked in that moment. The probe goes: the delivery is not taken for
// another copy of its message and dropped until JetStream hands it out again.
func TestHeldDeliveryIsProbedWhileItsLastSendLetsGo(t *testing.T) {
	t.Parallel()
	eachLedger(t, func(t *testing.T, e *env) {
		e.enqueue(store.Payload{Subject: "Report", Text: "t"}, e.channel(hookTo("http://"+channeltest.ClosedPort(t)+"/hook")))
		cfg := testConfig()
		cfg.Kinds = map[channels.Kind]KindConfig{webhook.Kind: webhookConfig()}
		cfg.ProbeInterval, cfg.ProbeIntervalMax = 10*time.Millisecond, time.Hour
		probe := &pausingSender{Sender: webhookSender(t, cfg.SendTimeout), after: 1,
			entered: make(chan struct{}, 1), release: make(chan struct{})}
		// The send that held the delivery logs so once it is back among the
		// waiting; it stays there until the probe has gone (or a while).
		stall := &stallOn{msg: "destination unavailable; holding its deliveries", until: probe.entered, passed: make(chan struct{})}
		r := e.startWith(startNATS(t, t.TempDir()), []channels.Sender{probe}, cfg, Options{Logger: slog.New(stall)})
		t.Cleanup(func() { close(probe.release) }) // before the worker stops, which waits for the probe
		r.relay.Notify()
		select {
		case <-stall.passed:
		case <-time.After(testTimeout):
			t.Fatal("the held delivery was never probed")
		}
	})
}

// stallOn is a log handler that holds the caller of the record msg until
// until receives, for at most two seconds, and closes passed once it did.
type stallOn struct {
	msg    string
	until  <-chan struct{}
	passed chan struct{}
	once   sync.Once
}

func (h *stallOn) Enabled(context.Context, slog.Level) bool { return true }
func (h *stallOn) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *stallOn) WithGroup(string) slog.Handler            { return h }

func (h *stallOn) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	select {
	case <-h.until:
		h.once.Do(func() { close(h.passed) })
	case <-time.After(2 * time.Second):
	}
	return nil
}
