package main

import (
	"context"
	"testing"
)

// BenchmarkDelivery compares, per iteration, 10,000 e-mails through the
// pipeline with the same e-mails from a bare go-mail loop, a lean one and the
// floor (the lean loop with the outbox, the stream and the ledger), 8
// connections each; go test -bench . -benchtime 5x gives five rounds.
func BenchmarkDelivery(b *testing.B) {
	const n, conc = 10000, 8
	var rs []round
	for b.Loop() {
		r, err := compare(context.Background(), b.TempDir(), n, conc, 1)
		if err != nil {
			b.Fatal(err)
		}
		rs = append(rs, r...)
	}
	s := summarize(rs)
	b.ReportMetric(s.bare, "bare-mails/s")
	b.ReportMetric(s.lean, "lean-mails/s")
	b.ReportMetric(s.pipeline, "pipeline-mails/s")
	b.ReportMetric(s.ledger, "ledger-mails/s")
	b.ReportMetric(s.pipeline/s.bare, "ratio")
	b.ReportMetric(s.pipeline/s.lean, "lean-ratio")
	b.ReportMetric(float64(s.bareCPU.Microseconds()), "bare-cpu-µs/mail")
	b.ReportMetric(float64(s.floorCPU.Microseconds()), "floor-cpu-µs/mail")
	b.ReportMetric(float64(s.pipelineCPU.Microseconds()), "pipeline-cpu-µs/mail")
	b.ReportMetric(0, "ns/op")
}

// TestDeliverySmoke runs a small comparison so that the benchmark's code is
// exercised by go test.
func TestDeliverySmoke(t *testing.T) {
	rs, err := compare(context.Background(), t.TempDir(), 200, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.bare.n != 200 || r.lean.n != 200 || r.floor.n != 200 || r.pipeline.n != 200 || r.ledger < r.pipeline.elapsed {
			t.Errorf("round %+v: want 200 e-mails each side, the ledger complete after they were accepted", r)
		}
	}
}
