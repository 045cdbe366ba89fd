package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkMarkSentBatch records sends the way a worker's group commits do:
// 20,000 pending deliveries, each with a rendered mail of about 6 KB, in
// batches of 4 with one delivery per run (an alert fan-in), in batches of
// 2 with 10 per run (a subscription of many channels; the delivery benchmark's
// group commits average 1.5 sends), and in batches of 8 of one run of all
// 20,000 (a subscription to as many recipients). It reports the time per
// delivery, with the ids runs and deliveries have (sortable) and with random
// ones.
func BenchmarkMarkSentBatch(b *testing.B) {
	for _, ids := range idForms {
		b.Run("fanin/"+ids.name, func(b *testing.B) { benchmarkMarkSent(b, ids.new, 4, 1) })
		b.Run("channels/"+ids.name, func(b *testing.B) { benchmarkMarkSent(b, ids.new, 2, 10) })
		b.Run("recipients/"+ids.name, func(b *testing.B) { benchmarkMarkSent(b, ids.new, 8, 20_000) })
	}
}

// idForms are the forms of run and delivery ids the benchmarks compare.
var idForms = []struct {
	name string
	new  func() string
}{
	{"sortable", NewSortableID},
	{"random", func() string { return NewID(24) }},
}

func benchmarkMarkSent(b *testing.B, newID func() string, batch, perRun int) {
	const n = 20_000
	ctx := context.Background()
	s, sub := openLedgerStore(b)
	html := strings.Repeat("<tr><td>Region</td><td>1,234.56</td></tr>\n", 150)
	marks := make([]SentMark, n)
	for i := 0; i < n; i += perRun {
		at := ledgerT0.Add(time.Duration(i) * time.Second)
		run := Run{ID: newID(), SubscriptionID: sub, ScheduledAt: at, Started: at}
		var ds []Delivery
		for j := i; j < i+perRun; j++ {
			marks[j] = SentMark{ID: newID(), ProviderID: fmt.Sprintf("<d%06d@example.com>", j)}
			ds = append(ds, Delivery{ID: marks[j].ID, ChannelID: fmt.Sprintf("c%d", j-i), Kind: "email",
				Payload: Payload{Subject: "Revenue", Text: "Revenue is up 3%", HTML: html}})
		}
		if err := s.EnqueueRun(ctx, run, ds); err != nil {
			b.Fatal(err)
		}
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

// BenchmarkFinishRuns hands runs over the way the engine's finisher does
// after a burst: batches of 256 claimed runs, each with one delivery and the
// condition it saw; the delivery is an alert of one line or a report mail
// of about 6 KB. It reports the time per run, with the ids runs and
// deliveries have (sortable) and with random ones.
func BenchmarkFinishRuns(b *testing.B) {
	for _, ids := range idForms {
		b.Run("alert/"+ids.name, func(b *testing.B) { benchmarkFinishRuns(b, ids.new, "") })
		b.Run("report/"+ids.name, func(b *testing.B) {
			benchmarkFinishRuns(b, ids.new, strings.Repeat("<tr><td>Region</td><td>1,234.56</td></tr>\n", 150))
		})
	}
}

func benchmarkFinishRuns(b *testing.B, newID func() string, html string) {
	const n, batch = 5_120, 256
	ctx := context.Background()
	s, sub := openLedgerStore(b)
	seen := true
	for round := 0; b.Loop(); round++ {
		b.StopTimer()
		fins := make([]Finish, n)
		runs := make([]Run, n)
		for i := range fins {
			at := ledgerT0.Add(time.Duration(round*n+i) * time.Second)
			runs[i] = Run{ID: newID(), SubscriptionID: sub, ScheduledAt: at, State: RunRunning,
				Started: at}
			run := runs[i]
			run.State, run.Finished = RunQueued, at
			fins[i] = Finish{Run: run, State: &SubscriptionState{LastCondition: &seen}, Deliveries: []Delivery{{
				ID: newID(), ChannelID: "c1", Kind: "email",
				Payload: Payload{Subject: "Revenue", Text: "Revenue 2,294,499.35", HTML: html}}}}
		}
		if _, err := s.ClaimRuns(ctx, runs); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for chunk := range slices.Chunk(fins, batch) {
			if err := s.FinishRuns(ctx, chunk, ledgerT0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/run")
}

// BenchmarkClaimRuns claims runs the way the engine's claimer does at a
// burst: batches of 512 fires, one run each, under a context that can be
// canceled. It reports the time per run.
func BenchmarkClaimRuns(b *testing.B) {
	const n, batch = 5_120, 512
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, sub := openLedgerStore(b)
	for round := 0; b.Loop(); round++ {
		b.StopTimer()
		runs := make([]Run, n)
		for i := range runs {
			at := ledgerT0.Add(time.Duration(round*n+i) * time.Second)
			runs[i] = Run{ID: NewSortableID(), SubscriptionID: sub, ScheduledAt: at, State: RunRunning, Started: at}
		}
		b.StartTimer()
		for chunk := range slices.Chunk(runs, batch) {
			claimed, err := s.ClaimRuns(ctx, chunk)
			if err != nil || !claimed[0] || !claimed[len(claimed)-1] {
				b.Fatal(claimed, err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/run")
}
