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
	for try := 1; ; try++ {
		lctx, cancel := context.WithTimeout(ctx, listWithin)
		it, err := c.ReplicaClient.LTXFiles(lctx, level, seek, useMetadata)
		unanswered := errors.Is(lctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		switch {
		case err == nil || !unanswered:
			return it, err
		case try == listTries:
			return nil, fmt.Errorf("listing level %d of the replica: no answer within %v, %d times: %w",
				level, listWithin, listTries, err)
		}
		c.log.Warn("the replica's listing did not answer; asking again", "level", level, "within", listWithin, "try", try)
	}
}
