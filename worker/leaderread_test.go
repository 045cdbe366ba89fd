package worker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestReadLastIsBoundedWithoutADeadline: a read whose caller set no deadline,
// to a subject that takes the request and never answers, as a leader that
// stalls would, ends after readTimeout rather than waiting for good.
func TestReadLastIsBoundedWithoutADeadline(t *testing.T) {
	n := startNATS(t, t.TempDir())
	nc := n.JetStream().Conn()
	sub, err := nc.SubscribeSync("herald.test.unanswered")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	was := readTimeout
	readTimeout = 50 * time.Millisecond
	t.Cleanup(func() { readTimeout = was })
	if _, err := readLast(context.Background(), nc, "herald.test.unanswered", "$KV.X.k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("readLast with no deadline, no answer = %v; want %v", err, context.DeadlineExceeded)
	}
}
