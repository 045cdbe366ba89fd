package worker

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The results consumer pulls with an iterator (Consumer.Messages): the
// outcomes it buffers are written in batches, and one that waits in its
// buffer past the ack wait comes again at no cost but a second write.
//
// A pull request lives pullExpiry, and JetStream sends a heartbeat on it
// every pullHeartbeat while it waits. A client that hears nothing for two
// heartbeats takes its request for lost and pulls anew. Now and then, under
// a burst, the client counts a request the server does not hold; with the
// library's defaults (30s and 15s) that stalled a kind for 30s with
// messages waiting. These bound the stall to 2s.
//
// The commonest such stall is the library's own: the iterator decides to
// pull only when Next starts or a message arrives, and it skips the pull
// while it is still sending the previous one. When the messages of that
// previous pull are taken before its sender marks it sent (a goroutine
// descheduled for a moment on a busy machine), the iterator's count falls to
// nothing with no pull made and none to come, and Next waits out the
// heartbeat check. So after each message the puller waits only
// pullRecheck before it calls Next again, which pulls then; the heartbeat
// check still runs on the wait after that.
const (
	pullExpiry    = 5 * time.Second
	pullHeartbeat = time.Second
	pullRecheck   = 50 * time.Millisecond
)

// nextFunc returns the next message, waiting for it until ctx ends.
type nextFunc func(ctx context.Context) (jetstream.Msg, error)

// messages starts pulling c's messages, at most held of them here at once, with
// the expiry and heartbeat above, and returns the iterator and the function
// that gives its messages with the recheck after each one (see pullRecheck).
func messages(c jetstream.Consumer, held int) (jetstream.MessagesContext, nextFunc, error) {
	it, err := c.Messages(jetstream.PullMaxMessages(held), jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return nil, nil, err
	}
	return it, rechecking(func(ctx context.Context) (jetstream.Msg, error) { return it.Next(jetstream.NextContext(ctx)) }), nil
}

// rechecking returns a function that returns the next message wait gives (the
// iterator's Next until its context ends). After a message, it first waits
// pullRecheck, then waits again without that bound (see pullRecheck).
func rechecking(wait nextFunc) nextFunc {
	recheck := false // the last wait returned a message
	return func(ctx context.Context) (jetstream.Msg, error) {
		if recheck {
			short, cancel := context.WithTimeout(ctx, pullRecheck)
			msg, err := wait(short)
			cancel()
			if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
				recheck = err == nil
				return msg, err
			}
		}
		msg, err := wait(ctx)
		recheck = err == nil
		return msg, err
	}
}
