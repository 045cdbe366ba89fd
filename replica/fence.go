package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// fencedClient is the object store as a fenced replicator writes it: every
// write and delete is refused once the lease validity the control process
// last gave it passed, by the replicator's own clock. A control process that
// stalls, or is frozen with its replicator, stops telling it, so that the
// replicator writes nothing into a replica that another process may own by
// then, even before its parent notices the lease is gone and kills it.
type fencedClient struct {
	litestream.ReplicaClient
	until atomic.Int64 // Unix nanoseconds; writes are refused from then on
}

// errReplicaFenced is the error of a write a fenced replicator refused.
var errReplicaFenced = errors.New("the control lease the replicator was last told of has passed")

func (c *fencedClient) check() error {
	until := c.until.Load()
	if time.Now().UnixNano() < until {
		return nil
	}
	return fmt.Errorf("%w (valid until %s): no write into the replica", errReplicaFenced,
		time.Unix(0, until).UTC().Format(time.RFC3339Nano))
}

func (c *fencedClient) WriteLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, r io.Reader) (*ltx.FileInfo, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.ReplicaClient.WriteLTXFile(ctx, level, minTXID, maxTXID, r)
}

func (c *fencedClient) DeleteLTXFiles(ctx context.Context, a []*ltx.FileInfo) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.ReplicaClient.DeleteLTXFiles(ctx, a)
}

func (c *fencedClient) DeleteAll(ctx context.Context) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.ReplicaClient.DeleteAll(ctx)
}

// validLine is the line the control process writes on the replicator's
// standard input to say until when it holds the lease.
func validLine(until time.Time) string {
	n := int64(0)
	if !until.IsZero() {
		n = until.UnixNano()
	}
	return "valid " + strconv.FormatInt(n, 10) + "\n"
}

// parseValid reads a line validLine wrote.
func parseValid(line string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "valid ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil
}
