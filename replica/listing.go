package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// listWithin bounds one listing of the replica; listTries is how many
// listings in a row may go unanswered before the error is returned.
const (
	listWithin = 30 * time.Second
	listTries  = 4
)

// boundedListing is a replica client whose listings have a deadline.
// Litestream lists the replica without one of its own, and nats.go lists an
// object store through a consumer it waits on until its context ends: a
// listing that never answered would hold the replicator, and with it a
// control process that holds the control lease and serves nothing. A listing
// that times out is asked again. The NATS client reads the whole listing
// before it returns, so its iterator outlives the listing's context.
type boundedListing struct {
	litestream.ReplicaClient
	log *slog.Logger
}

// LTXFiles lists the files of level, each try within listWithin.
func (c boundedListing) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	return askAgain(ctx, c.log, fmt.Sprintf("listing level %d of the replica", level), func(ctx context.Context) (ltx.FileIterator, error) {
		return c.ReplicaClient.LTXFiles(ctx, level, seek, useMetadata)
	})
}

// askAgain returns what list answers within listWithin, asking again a
// listing that went unanswered, listTries times in all; what names the
// listing in the warnings and the error. A listing whose caller's ctx ended
// is not asked again.
func askAgain[T any](ctx context.Context, log *slog.Logger, what string, list func(context.Context) (T, error)) (T, error) {
	for try := 1; ; try++ {
		lctx, cancel := context.WithTimeout(ctx, listWithin)
		out, err := list(lctx)
		unanswered := errors.Is(lctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		switch {
		case err == nil || !unanswered:
			return out, err
		case try == listTries:
			var none T
			return none, fmt.Errorf("%s: no answer within %v, %d times: %w", what, listWithin, listTries, err)
		}
		log.Warn("a listing of the replica did not answer; asking again", "listing", what, "within", listWithin, "try", try)
	}
}
