package replica

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/superfly/ltx"
)

// stallingClient is a replica whose first stalls listings never answer: they
// wait until their context ends, as nats.go's listing of an object store does
// when its consumer receives nothing.
type stallingClient struct {
	litestream.ReplicaClient
	stalls, calls int
}

func (c *stallingClient) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	c.calls++
	if c.calls <= c.stalls {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return ltx.NewFileInfoSliceIterator(nil), nil
}

func TestAListingThatDoesNotAnswerIsAskedAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stalls    int
		wantErr   string
		wantCalls int
	}{
		{name: "answered at the third try", stalls: 2, wantCalls: 3},
		{name: "never answered", stalls: 100, wantCalls: listTries,
			wantErr: "listing level 0 of the replica: no answer within 30s, 4 times: context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var out syncBuffer
				replica := &stallingClient{stalls: tc.stalls}
				c := boundedListing{replica, slog.New(slog.NewTextHandler(&out, nil))}
				began := time.Now()
				it, err := c.LTXFiles(t.Context(), 0, 0, false)
				took := time.Since(began)
				switch {
				case tc.wantErr == "" && err != nil:
					t.Fatalf("LTXFiles: %v", err)
				case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
					t.Fatalf("LTXFiles returned %v, want %q", err, tc.wantErr)
				case err == nil:
					_ = it.Close()
				}
				if replica.calls != tc.wantCalls {
					t.Errorf("%d listings, want %d", replica.calls, tc.wantCalls)
				}
				if want := time.Duration(min(tc.stalls, listTries)) * listWithin; took != want {
					t.Errorf("took %v, want %v", took, want)
				}
				if got, want := strings.Count(out.String(), "did not answer; asking again"), min(tc.stalls, listTries-1); got != want {
					t.Errorf("%d warnings, want %d:\n%s", got, want, out.String())
				}
			})
		})
	}
}

// TestAListingEndedByItsCallerIsNotAskedAgain: only a listing that went
// unanswered is asked again, not one whose caller gave up.
func TestAListingEndedByItsCallerIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		replica := &stallingClient{stalls: 100}
		c := boundedListing{replica, slog.New(slog.DiscardHandler)}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := c.LTXFiles(ctx, 0, 0, false); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("LTXFiles returned %v, want the caller's deadline", err)
		}
		if replica.calls != 1 {
			t.Errorf("%d listings, want 1", replica.calls)
		}
	})
}

// stallingStore is an object store, empty, whose first stalls listings never
// answer.
type stallingStore struct {
	jetstream.ObjectStore
	stalls, calls int
}

func (s *stallingStore) List(ctx context.Context, _ ...jetstream.ListObjectsOpt) ([]*jetstream.ObjectInfo, error) {
	s.calls++
	if s.calls <= s.stalls {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, jetstream.ErrNoObjectsFound
}

// TestASnapshotListingThatDoesNotAnswerIsAskedAgain: the control process
// lists the replica's objects as it starts (Load, HasDatabase); one that goes
// unanswered is asked again rather than holding the start for ever.
func TestASnapshotListingThatDoesNotAnswerIsAskedAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stalls    int
		wantErr   string
		wantCalls int
	}{
		{name: "answered at the second try", stalls: 1, wantCalls: 2},
		{name: "never answered", stalls: 100, wantCalls: listTries,
			wantErr: "listing the replica's objects: no answer within 30s, 4 times: context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var out syncBuffer
				obs := &stallingStore{stalls: tc.stalls}
				s := &Snapshots{obs: obs, log: slog.New(slog.NewTextHandler(&out, nil))}
				began := time.Now()
				has, err := s.HasDatabase(t.Context())
				switch {
				case tc.wantErr == "" && (err != nil || has):
					t.Fatalf("HasDatabase = %v, %v; want false, nil", has, err)
				case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
					t.Fatalf("HasDatabase returned %v, want %q", err, tc.wantErr)
				}
				if obs.calls != tc.wantCalls {
					t.Errorf("%d listings, want %d", obs.calls, tc.wantCalls)
				}
				if took, want := time.Since(began), time.Duration(min(tc.stalls, listTries))*listWithin; took != want {
					t.Errorf("took %v, want %v", took, want)
				}
				if got, want := strings.Count(out.String(), "did not answer; asking again"), min(tc.stalls, listTries-1); got != want {
					t.Errorf("%d warnings, want %d:\n%s", got, want, out.String())
				}
			})
		})
	}
}
