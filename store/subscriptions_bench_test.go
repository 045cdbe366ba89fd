package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// BenchmarkSubscriptionsByID reads subscriptions the way the engine's
// claimer does after a burst's claim: 10,000 alert subscriptions of one
// channel each, in batches of 512 ids. It reports the time per subscription.
func BenchmarkSubscriptionsByID(b *testing.B) {
	const n, batch = 10_000, 512
	ctx := context.Background()
	s, _ := openLedgerStore(b)
	if err := s.CreateChannel(ctx, Channel{ID: "c1", Owner: "u1", Kind: "email", Title: "Mail",
		Config: []byte(`{"to":"jane@example.com"}`), Created: ledgerT0, Updated: ledgerT0}, Quota{}); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sub%05d", i)
		metric := fmt.Sprintf("/gdc/md/p1/obj/%d", i%100)
		sub := Subscription{ID: ids[i], ProjectID: "p1", Owner: "u1", Title: "Revenue watch", Enabled: true,
			Channels: []string{"c1"}, Created: ledgerT0, Updated: ledgerT0, Def: SubscriptionDef{
				Triggers:  []Trigger{{Cron: "0 0 * * * *", Timezone: "Europe/Prague"}},
				Condition: "f:executeMetric('" + metric + "') gt 1000",
				Message:   "Revenue is ${f:executeMetric('" + metric + "')}", FireMode: FireAlways}}
		if err := s.CreateSubscription(ctx, sub, Quota{}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		for chunk := range slices.Chunk(ids, batch) {
			subs, err := s.SubscriptionsByID(ctx, chunk)
			if err != nil || len(subs) != len(chunk) {
				b.Fatalf("%d of %d subscriptions: %v", len(subs), len(chunk), err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/subscription")
}
