package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCheckpointsOffTheWriter writes about 4 MB, well under the log the
// writer checkpoints itself, and wants the database file to take in those
// pages all the same, from the checkpointer, within a few of its intervals.
// It also wants the writer's own checkpoints held back to their threshold,
// and the writer's page cache at its size.
func TestCheckpointsOffTheWriter(t *testing.T) {
	t.Parallel()
	s, sub := openLedgerStore(t)
	ctx := context.Background()
	var pages int
	if err := s.w.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != writerCheckpointPages {
		t.Errorf("the writer checkpoints after %d pages, want %d", pages, writerCheckpointPages)
	}
	var cache int
	if err := s.w.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		t.Fatal(err)
	}
	if cache != -writerCacheKiB {
		t.Errorf("the writer's page cache is %d, want %d (KiB)", cache, -writerCacheKiB)
	}
	var seq int
	var name, path string
	if err := s.r.QueryRowContext(ctx, `PRAGMA database_list`).Scan(&seq, &name, &path); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)
	html := strings.Repeat("<p>a paragraph of a report mail</p>\n", 1000)
	for i := range 100 {
		at := ledgerT0.Add(time.Duration(i) * time.Hour)
		run := Run{ID: fmt.Sprintf("r%03d", i), SubscriptionID: sub, ScheduledAt: at, Started: at}
		if err := s.EnqueueRun(ctx, run, []Delivery{{ID: run.ID + "-d", ChannelID: "c1", Kind: "email",
			Payload: Payload{Subject: "Revenue", HTML: html}}}); err != nil {
			t.Fatal(err)
		}
	}
	const want = 3 << 20
	deadline := time.Now().Add(5 * checkpointInterval)
	for fileSize(t, path)-before < want {
		if time.Now().After(deadline) {
			t.Fatalf("the database file grew %d bytes in %s, want at least %d: the log was not checkpointed",
				fileSize(t, path)-before, 5*checkpointInterval, want)
		}
		time.Sleep(checkpointInterval / 10)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
