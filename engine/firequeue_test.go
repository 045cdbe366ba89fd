package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// TestFireQueueTakesABurstWithoutWaiting: a burst far larger than one batch
// is pushed without the pusher waiting, and taken in batches, oldest first.
func TestFireQueueTakesABurstWithoutWaiting(t *testing.T) {
	t.Parallel()
	q := newFireQueue(1 << 20)
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	const n = 100_000
	for i := range n {
		if err := q.push(Fire{SubscriptionID: "s", At: t0.Add(time.Duration(i))}); err != nil {
			t.Fatal(err)
		}
	}
	batch := make([]Fire, 0, 512)
	var got int
	for got < n {
		var err error
		if batch, err = q.take(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		if len(batch) != min(512, n-got) {
			t.Fatalf("a batch of %d with %d queued", len(batch), n-got)
		}
		for _, f := range batch {
			if want := t0.Add(time.Duration(got)); !f.At.Equal(want) {
				t.Fatalf("fire %d at %v, want %v", got, f.At, want)
			}
			got++
		}
	}
}

// TestFireQueueWaitsWhenFull: past its bound, push waits for a take, and
// returns when the queue is stopped; take waits for a push.
func TestFireQueueWaitsWhenFull(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q := newFireQueue(2)
		for range 2 {
			if err := q.push(Fire{SubscriptionID: "s"}); err != nil {
				t.Fatal(err)
			}
		}
		pushed := make(chan error, 1)
		go func() { pushed <- q.push(Fire{SubscriptionID: "third"}) }()
		synctest.Wait()
		select {
		case err := <-pushed:
			t.Fatalf("a push into a full queue returned %v", err)
		default:
		}
		batch, err := q.take(context.Background(), make([]Fire, 0, 1))
		if err != nil || len(batch) != 1 {
			t.Fatalf("take = %v, %v", batch, err)
		}
		if err := <-pushed; err != nil {
			t.Fatal(err)
		}

		go func() { pushed <- q.push(Fire{SubscriptionID: "fourth"}) }()
		synctest.Wait()
		q.stop()
		if err := <-pushed; !errors.Is(err, errQueueStopped) {
			t.Fatalf("push after stop = %v", err)
		}

		empty := newFireQueue(2)
		ctx, cancel := context.WithCancel(context.Background())
		taken := make(chan error, 1)
		go func() {
			_, err := empty.take(ctx, make([]Fire, 0, 4))
			taken <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-taken; !errors.Is(err, context.Canceled) {
			t.Fatalf("take from an empty queue = %v", err)
		}
	})
}

// TestFireQueueWakesEveryWaitingPush: two pushes wait on a full queue; one
// take that makes room for both lets both in.
func TestFireQueueWakesEveryWaitingPush(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q := newFireQueue(2)
		for range 2 {
			if err := q.push(Fire{SubscriptionID: "s"}); err != nil {
				t.Fatal(err)
			}
		}
		pushed := make(chan error, 2)
		for range 2 {
			go func() { pushed <- q.push(Fire{SubscriptionID: "later"}) }()
		}
		synctest.Wait()
		if batch, err := q.take(context.Background(), make([]Fire, 0, 2)); err != nil || len(batch) != 2 {
			t.Fatalf("take = %v, %v", batch, err)
		}
		for range 2 {
			if err := <-pushed; err != nil {
				t.Fatal(err)
			}
		}
		if batch, err := q.take(context.Background(), make([]Fire, 0, 4)); err != nil || len(batch) != 2 {
			t.Fatalf("take after the waiting pushes = %v, %v", batch, err)
		}
	})
}

// TestFireQueueTakesABatchLargerThanItsRoom: a push of more fires than there
// is room for queues what fits and waits for takes to queue the rest, in
// order; stopped meanwhile, it returns.
func TestFireQueueTakesABatchLargerThanItsRoom(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q := newFireQueue(4)
		t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
		fires := make([]Fire, 10)
		for i := range fires {
			fires[i] = Fire{SubscriptionID: "s", At: t0.Add(time.Duration(i))}
		}
		pushed := make(chan error, 1)
		go func() { pushed <- q.push(fires...) }()
		var got []Fire
		batch := make([]Fire, 0, 3)
		for len(got) < len(fires) {
			var err error
			if batch, err = q.take(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			got = append(got, batch...)
		}
		if err := <-pushed; err != nil {
			t.Fatal(err)
		}
		for i, f := range got {
			if !f.At.Equal(fires[i].At) {
				t.Fatalf("fire %d at %v, want %v", i, f.At, fires[i].At)
			}
		}

		go func() { pushed <- q.push(fires...) }()
		synctest.Wait()
		q.mu.Lock()
		n := q.n
		q.mu.Unlock()
		if n != 4 {
			t.Fatalf("%d fires queued of a push of 10 into a room of 4", n)
		}
		q.stop()
		if err := <-pushed; !errors.Is(err, errQueueStopped) {
			t.Fatalf("push after stop = %v", err)
		}
	})
}

// TestFireQueueTakesOwnersInTurn: one owner's burst queued first delays
// another owner's fire by one fire: take serves the owners' lanes in turn,
// each lane oldest first.
func TestFireQueueTakesOwnersInTurn(t *testing.T) {
	t.Parallel()
	q := newFireQueue(1 << 20)
	var burst []Fire
	for i := range 1000 {
		burst = append(burst, Fire{SubscriptionID: "a" + strconv.Itoa(i), Owner: "a"})
	}
	if err := q.push(burst...); err != nil {
		t.Fatal(err)
	}
	if err := q.push(Fire{SubscriptionID: "b0", Owner: "b"}, Fire{SubscriptionID: "b1", Owner: "b"}); err != nil {
		t.Fatal(err)
	}
	batch, err := q.take(context.Background(), make([]Fire, 0, 5))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range batch {
		got = append(got, f.SubscriptionID)
	}
	if want := []string{"a0", "b0", "a1", "b1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("took %v, want %v", got, want)
	}
	for n := 5; n < 1002; {
		if batch, err = q.take(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		n += len(batch)
	}
	if len(q.lanes) != 0 || len(q.ring) != 0 || q.n != 0 {
		t.Fatalf("emptied, the queue keeps %d lanes, %d in turn, %d fires", len(q.lanes), len(q.ring), q.n)
	}
}
