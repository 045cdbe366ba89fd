package worker

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// TestConsumeReplacesALostPull has the server lose the worker's pull request:
// while the worker may not publish pull requests, the one the server held
// expires and the one the client sends in its place is refused, so the
// client counts a request the server does not hold. Once pulls are allowed
// again, a delivery must go out within a few seconds, not after the
// library's 30s heartbeat check. The refusal must reach the log.
func TestConsumeReplacesALostPull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	opts := &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(),
		NoSigs: true, NoLog: true}
	setPulls := func(allowed bool) {
		t.Helper()
		perms := &server.Permissions{Publish: &server.SubjectPermission{Allow: []string{">"}}}
		if !allowed {
			perms.Publish.Deny = []string{"$JS.API.CONSUMER.MSG.NEXT.>"}
		}
		next := *opts
		next.Users = []*server.User{{Username: "herald", Password: "pw", Permissions: perms}}
		opts = &next
	}
	setPulls(true)
	srv := startServer(t, opts)
	var logged syncBuffer
	n, err := Connect(ExternalConfig{URL: "nats://herald:pw@" + srv.Addr().String(),
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)

	smtp := channeltest.NewSMTPServer(t)
	ch := e.channel(smtp.Channel())
	r := e.start(n, []channels.Sender{emailSender(t, smtp.Host(), smtp.Port())}, testConfig())
	_, ids := e.enqueue(store.Payload{Subject: "first", Text: "before"}, ch)
	r.relay.Notify()
	r.await(t, ids[0], outcomeSent)

	setPulls(false)
	if err := srv.ReloadOptions(opts); err != nil {
		t.Fatal(err)
	}
	cons, err := n.JetStream().Consumer(ctx, r.w.cfg.Stream, durable("email"))
	if err != nil {
		t.Fatal(err)
	}
	// Pulls are allowed again only once the server holds no pull request of
	// the worker's and has refused the one sent in its place: allowed at once
	// when the held one expired, the next pull could still go through.
	waitUntil(t, func() bool {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.NumWaiting == 0 && refused(logged.String())
	}, "the server to hold no pull request of the worker's and to refuse, with a warning in the log, the pull sent in its place")

	setPulls(true)
	if err := srv.ReloadOptions(opts); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_, ids = e.enqueue(store.Payload{Subject: "second", Text: "after"}, ch)
	r.relay.Notify()
	r.await(t, ids[0], outcomeSent)
	if took, limit := time.Since(begin), 2*pullHeartbeat+time.Second; took > limit {
		t.Errorf("sent %s after pulls were allowed again, want within %s", took, limit)
	}
	if log := logged.String(); !refused(log) {
		t.Errorf("log = %q, want a warning of the refused pull", log)
	}
}

// refused reports whether log warns of a pull request the server refused.
func refused(log string) bool {
	return strings.Contains(log, `level=WARN msg="nats error"`) && strings.Contains(log, "Permissions Violation for Publish to")
}

// TestPullAsksAgainAfterAMessage has the iterator's count of requested
// messages fall to nothing with no pull made, as the library leaves it when
// the messages of its last pull are taken before it marks that pull sent: its
// Next then hears nothing until the heartbeat check gives up. After a message,
// the puller must ask again within pullRecheck, when the iterator pulls.
func TestPullAsksAgainAfterAMessage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		wait := func(ctx context.Context) (jetstream.Msg, error) {
			calls++
			if calls != 2 {
				return nil, nil // a message: the first, and the one the next pull brings
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * pullHeartbeat):
				return nil, jetstream.ErrNoHeartbeat
			}
		}
		nextMsg := rechecking(wait)
		if _, err := nextMsg(t.Context()); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if _, err := nextMsg(t.Context()); err != nil {
			t.Fatalf("next: %v, want the message", err)
		}
		if took := time.Since(begin); took > pullRecheck {
			t.Errorf("the message came %s after the last one, want within %s", took, pullRecheck)
		}
	})
}
