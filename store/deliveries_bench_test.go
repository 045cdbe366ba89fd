package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkMarkSentBatch records sends the way a worker's group commits do:
// batches of 4 of 20,000 pending deliveries, each with a rendered mail of
// about 6 KB, one run each (an alert fan-in). It reports the time per
// delivery.
func BenchmarkMarkSentBatch(b *testing.B) {
	const n, batch = 20_000, 4
	ctx := context.Background()
	s, sub := openLedgerStore(b)
	html := strings.Repeat("<tr><td>Region</td><td>1,234.56</td></tr>\n", 150)
	for chunk := 0; chunk < n; chunk += 500 {
		for i := chunk; i < chunk+500; i++ {
			at := ledgerT0.Add(time.Duration(i) * time.Second)
			run := Run{ID: fmt.Sprintf("r%06d", i), SubscriptionID: sub, ScheduledAt: at, Started: at}
			d := Delivery{ID: fmt.Sprintf("d%06d", i), ChannelID: "c1", Kind: "email",
				Payload: Payload{Subject: "Revenue", Text: "Revenue is up 3%", HTML: html}}
			if err := s.EnqueueRun(ctx, run, []Delivery{d}); err != nil {
				b.Fatal(err)
			}
		}
	}
	marks := make([]SentMark, n)
	for i := range marks {
		marks[i] = SentMark{ID: fmt.Sprintf("d%06d", i), ProviderID: fmt.Sprintf("<d%06d@example.com>", i)}
	}
	for b.Loop() {
		b.StopTimer()
		if _, err := s.w.ExecContext(ctx, `UPDATE deliveries SET state = 'pending', attempts = 0`); err != nil {
			b.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, `UPDATE runs SET state = 'queued', finished = NULL`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; i < n; i += batch {
			if _, err := s.MarkSentBatch(ctx, marks[i:i+batch], ledgerT0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delivery")
}
