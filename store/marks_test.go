package store

import (
	"context"
	"testing"
	"time"
)

// TestChannelMarksFollowWhatWasSent: a delivery's marks become its
// channel's once it is sent, by this process's senders or by an outcome
// reported from elsewhere; not when it fails; a delivery of an earlier
// instant sent late does not replace those of a later one; and the marks
// outlive the runs, which are pruned.
func TestChannelMarksFollowWhatWasSent(t *testing.T) {
	t.Parallel()
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	hand := func(at time.Time, digest string, day int64, channels ...string) string {
		run := Run{ID: "r" + digest, SubscriptionID: sub, ScheduledAt: at, Started: at}
		var ds []Delivery
		for _, ch := range channels {
			ds = append(ds, Delivery{ID: run.ID + "-" + ch, ChannelID: ch, Kind: "email",
				Marks: &Marks{Digest: digest, HighWater: map[string]int64{"report date": day}}})
		}
		if err := s.EnqueueRun(ctx, run, ds); err != nil {
			t.Fatal(err)
		}
		return run.ID
	}
	t1, t2 := ledgerT0.Add(time.Hour), ledgerT0.Add(2*time.Hour)
	r1 := hand(t1, "d1", 100, "c1", "c2")
	r2 := hand(t2, "d2", 200, "c1")
	// The later run's delivery is sent first, then the earlier one's.
	if _, err := s.MarkSent(ctx, r2+"-c1", "p", t2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordOutcomes(ctx, []Outcome{{ID: r1 + "-c1", State: DeliverySent, Attempts: 1, At: t2},
		{ID: r1 + "-c2", State: DeliveryFailed, Attempts: 1, LastError: "550", At: t2}}); err != nil {
		t.Fatal(err)
	}
	marks, err := s.ChannelMarks(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	got := marks["c1"]
	if len(marks) != 1 || got.Digest != "d2" || got.HighWater["report date"] != 200 || !got.At.Equal(t2) {
		t.Fatalf("marks = %+v, want c1 only, with the later run's", marks)
	}
	// An outcome reported from elsewhere keeps the marks as a send here does.
	t3 := t2.Add(time.Hour)
	r3 := hand(t3, "d3", 300, "c2")
	if _, err := s.RecordOutcomes(ctx, []Outcome{{ID: r3 + "-c2", State: DeliverySent, Attempts: 1, At: t3}}); err != nil {
		t.Fatal(err)
	}
	if marks, err = s.ChannelMarks(ctx, sub); err != nil || marks["c2"].Digest != "d3" || marks["c2"].HighWater["report date"] != 300 {
		t.Fatalf("marks after a reported send = %+v, %v", marks, err)
	}
	if _, err := s.PruneRuns(ctx, t3.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if marks, err = s.ChannelMarks(ctx, sub); err != nil || marks["c1"].Digest != "d2" {
		t.Fatalf("after pruning: %+v, %v", marks, err)
	}
}

// TestLastValuesAreKept: the values f:previous reads are kept with the
// subscription's state, a null among them.
func TestLastValuesAreKept(t *testing.T) {
	t.Parallel()
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	run := Run{ID: "r1", SubscriptionID: sub, ScheduledAt: ledgerT0, State: RunRunning, Started: ledgerT0}
	if err := s.ClaimRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	v := 35.5
	run.State = RunNotTriggered
	st := SubscriptionState{LastValues: map[string]*float64{"/svc/md/p1/obj/1": &v, "/svc/md/p1/obj/2": nil}}
	if err := s.FinishRuns(ctx, []Finish{{Run: run, State: &st}}, ledgerT0); err != nil {
		t.Fatal(err)
	}
	got, err := s.State(ctx, sub)
	if err != nil || len(got.LastValues) != 2 || *got.LastValues["/svc/md/p1/obj/1"] != 35.5 || got.LastValues["/svc/md/p1/obj/2"] != nil {
		t.Fatalf("state = %+v, %v", got, err)
	}
}
