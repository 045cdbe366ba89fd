package worker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/store"
)

// TestSQLiteLedgerRecordsAGroupInOneCommit: sends accepted one right after
// another, each within groupGap of the last, are recorded in one transaction,
// groupGap after the last of them; a send alone is recorded groupGap after it
// came, and a group that keeps growing is committed groupWait after its first.
func TestSQLiteLedgerRecordsAGroupInOneCommit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		chs := make([]string, 20)
		for i := range chs {
			chs[i] = e.channel(mailTo(fmt.Sprintf("ops%d@example.com", i)))
		}
		_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, chs...)
		var mu sync.Mutex
		var commits [][]string
		l := NewSQLiteLedger(e.st, nil, func(got []string) {
			mu.Lock()
			defer mu.Unlock()
			commits = append(commits, slices.Sorted(slices.Values(got)))
		})
		step := groupGap * 3 / 8 // no send comes at the instant groupWait ends
		sendEach := func(ids []string) time.Duration {
			start := time.Now()
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() {
					time.Sleep(time.Duration(i) * step)
					if ok, err := l.Sent(context.Background(), id, "<"+id+"@example.com>"); err != nil || !ok {
						t.Errorf("Sent(%s) = %v, %v; want true, nil", id, ok, err)
					}
				})
			}
			wg.Wait()
			return time.Since(start)
		}

		group, alone, long := ids[:5], ids[5:6], ids[6:]
		if took := sendEach(group); took != time.Duration(len(group)-1)*step+groupGap {
			t.Errorf("a group of %d, one every %v: recorded after %v, want %v after the last came", len(group), step, took, groupGap)
		}
		if took := sendEach(alone); took != groupGap {
			t.Errorf("a send alone recorded after %v, want %v", took, groupGap)
		}
		sendEach(long) // 14 sends, one every step: longer than groupWait
		wantFirst := int(groupWait/step) + 1
		want := [][]string{slices.Sorted(slices.Values(group)), alone,
			slices.Sorted(slices.Values(long[:wantFirst])), slices.Sorted(slices.Values(long[wantFirst:]))}
		mu.Lock()
		defer mu.Unlock()
		if !slices.EqualFunc(commits, want, slices.Equal) {
			t.Errorf("commits %v, want %v", commits, want)
		}
		for _, id := range ids {
			if d := e.delivery(id); d.State != store.DeliverySent {
				t.Errorf("delivery %s %s, want sent", id, d.State)
			}
		}
	})
}
