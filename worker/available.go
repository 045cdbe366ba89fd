package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock"
)

// JetStream can be unavailable for a while with nothing wrong: a cluster
// electing its leaders, after a start or the loss of a node, answers late or
// not at all, or says it is temporarily unavailable. Delivery sets up its
// streams, buckets and consumers through untilAvailable, so a process started
// beside such a cluster waits for it rather than exiting.
const (
	// availableFirstWait bounds the pause after the first unavailable answer;
	// the bound doubles after each until availableMaxWait, and each pause is
	// drawn below it (backoff), so that parts started together do not ask
	// together.
	availableFirstWait = 250 * time.Millisecond
	availableMaxWait   = 10 * time.Second
)

// errNotSetUp is what a part's readiness check says until its streams and
// consumers are set up.
var errNotSetUp = errors.New("setting up the delivery stream and consumers")

// untilAvailable runs step until it succeeds, fails for a reason waiting does
// not change, or ctx ends, and logs a warning naming what for each try that
// found JetStream unavailable.
func untilAvailable(ctx context.Context, log *slog.Logger, what string, step func(context.Context) error) error {
	for try := 1; ; try++ {
		err := step(ctx)
		if err == nil || ctx.Err() != nil || !unavailable(err) {
			return err
		}
		wait := backoff(try, availableFirstWait, availableMaxWait, rand.Int64N)
		log.Warn("JetStream is unavailable; trying again", "step", what, "try", try, "in", wait, "err", err)
		if !clock.Sleep(ctx, clock.Real(), wait) { // JetStream comes back in real time
			return fmt.Errorf("%s: %w (last try: %v)", what, ctx.Err(), err)
		}
	}
}

// unavailable reports whether err is JetStream not answering for now rather
// than refusing what was asked: a request that timed out, no server answering
// JetStream's API (JetStream starting, or its servers away), or a cluster that
// says it is temporarily unavailable. The caller's own context has not ended.
// A server that could not make a stream's store (its disk full, its
// JetStream still starting) is waited for too: the next try finds the disk
// healed or the stream made, and each try is logged.
func unavailable(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.As(err, &api) && (api.ErrorCode == jsErrCodeClusterNotAvailable ||
			api.ErrorCode == jsErrCodeStreamCreate && api.Description == jsStoreFailed)
}

// jsErrCodeClusterNotAvailable is nats-server's JSClusterNotAvailErr, "JetStream
// system temporarily unavailable", which nats.go names no constant for.
const jsErrCodeClusterNotAvailable jetstream.ErrorCode = 10008

// jsErrCodeStreamCreate is nats-server's JSStreamCreateErrF, a stream create
// that failed, which nats.go names no constant for.
const jsErrCodeStreamCreate jetstream.ErrorCode = 10049

// jsStoreFailed is how nats-server describes a stream create whose store it
// could not make; it logs the cause and answers only this.
const jsStoreFailed = "error creating store for stream"
