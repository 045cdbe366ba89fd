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

// listings are the listings of the replica that are asked again: each lists
// from a replica whose first stalls listings never answer, and returns how
// many it asked for and its error.
var listings = []struct {
	name, what string // what: how the error names it
	list       func(ctx context.Context, stalls int, log *slog.Logger) (calls int, err error)
}{
	{"the replicator's", "listing level 0 of the replica", func(ctx context.Context, stalls int, log *slog.Logger) (int, error) {
		replica := &stallingClient{stalls: stalls}
		it, err := boundedListing{replica, log}.LTXFiles(ctx, 0, 0, false)
		if err == nil {
			_ = it.Close()
		}
		return replica.calls, err
	}},
	{"the snapshots'", "listing the replica's objects", func(ctx context.Context, stalls int, log *slog.Logger) (int, error) {
		obs := &stallingStore{stalls: stalls}
		has, err := (&Snapshots{obs: obs, log: log}).HasDatabase(ctx)
		if err == nil && has {
			err = errors.New("an empty replica holds a database")
		}
		return obs.calls, err
	}},
}

// TestAListingThatDoesNotAnswerIsAskedAgain: a listing of the replica, the
// replicator's or the control process's of its snapshots as it starts, that
// goes unanswered is asked again rather than holding the process for ever,
// and given up after listTries.
func TestAListingThatDoesNotAnswerIsAskedAgain(t *testing.T) {
	t.Parallel()
	for _, l := range listings {
		for _, tc := range []struct {
			name      string
			stalls    int
			wantErr   string
			wantCalls int
		}{
			{name: "answered at the third try", stalls: 2, wantCalls: 3},
			{name: "never answered", stalls: 100, wantCalls: listTries,
				wantErr: l.what + ": no answer within 30s, 4 times: context deadline exceeded"},
		} {
			t.Run(l.name+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					var out syncBuffer
					began := time.Now()
					calls, err := l.list(t.Context(), tc.stalls, slog.New(slog.NewTextHandler(&out, nil)))
					took := time.Since(began)
					switch {
					case tc.wantErr == "" && err != nil:
						t.Fatalf("listing: %v", err)
					case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
						t.Fatalf("listing returned %v, want %q", err, tc.wantErr)
					}
					if calls != tc.wantCalls {
						t.Errorf("%d listings, want %d", calls, tc.wantCalls)
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
}
