package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// conflictingScheduler refuses its first conflicts sends now as the engine
// does when the subscription already has a run at that second.
type conflictingScheduler struct{ conflicts, sent int }

func (*conflictingScheduler) SubscriptionChanged(string) {}

func (c *conflictingScheduler) SendNow(_ context.Context, sub store.Subscription, _ string) (store.Run, error) {
	if c.conflicts > 0 {
		c.conflicts--
		return store.Run{}, store.ErrConflict
	}
	c.sent++
	return store.Run{ID: "r", SubscriptionID: sub.ID}, nil
}

// TestSendNowRefusedAtABusySecondMayBeAskedAgain: a send now refused because
// the subscription already has a run at that second says to try again a
// second later, and that try is let through: the refusal spent neither the
// subscription's SendNowEvery nor the owner's budget. A send that went holds
// the next for SendNowEvery.
func TestSendNowRefusedAtABusySecondMayBeAskedAgain(t *testing.T) {
	t.Parallel()
	cfg := notify.DefaultConfig()
	cfg.SendNowPerHour = 2 // a refusal that spent one would leave none for the third
	sc := &conflictingScheduler{conflicts: 1}
	w := newTestWorld(t, cfg, func(o *notify.Options) { o.Scheduler = sc })
	svc := w.svc
	ctx := context.Background()
	ch, err := svc.CreateChannel(ctx, "u1", channelBody(t, smsChannel))
	must(t, err)
	sub, err := svc.CreateSubscription(ctx, "p1", "u1", subBody(t, `{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * *"}}],
		"condition":{"condition":{"expression":"true"}},"message":{"template":{"expression":"hi"}},
		"channels":["/svc/account/profile/u1/channelConfigurations/`+ch.ID+`"],"meta":{"title":"Morning"}}`))
	must(t, err)

	_, err = svc.SendNow(ctx, "p1", "u1", sub.ID, "u1")
	var de *notify.Error
	if !errors.As(err, &de) || de.Code != notify.TooSoon || de.RetryAfter != time.Second || !strings.Contains(de.Text(), "try again") {
		t.Fatalf("a send now at a second with a run: %v, want TooSoon, again in a second", err)
	}
	w.now = w.now.Add(time.Second)
	if _, err := svc.SendNow(ctx, "p1", "u1", sub.ID, "u1"); err != nil {
		t.Fatalf("the send now a second later: %v", err)
	}
	w.now = w.now.Add(time.Second)
	if _, err := svc.SendNow(ctx, "p1", "u1", sub.ID, "u1"); !errors.As(err, &de) || de.Code != notify.TooSoon ||
		!strings.Contains(de.Text(), "sent moments ago") {
		t.Fatalf("a send now a second after one went: %v, want TooSoon for SendNowEvery", err)
	}
	if sc.sent != 1 {
		t.Errorf("%d sends reached the engine, want 1", sc.sent)
	}
}
